"""Giving up on a run whose requests fail or stall: a node that dies mid-run ends the run
in bounded time, with what was measured so far, instead of hanging it.

A :class:`Watchdog` thread looks at the run's :class:`~profiling.harness.patterns.Tally` (requests sent,
ended and failed) and, where there is one, a progress counter (responses decoded, when
instrumented) a few times a second and gives up when

* requests fail and none succeeds for ``failing_s`` (a dead node: every request fails at once
  with ``NoHostAvailable``), or the driver holds no host up for ``failing_s`` (every request
  sent then fails, though a pattern that counts its failures only at the end has not seen one), or
* nothing moves for ``stalled_s``: no request sent, none ended and no response decoded (a node
  that stopped answering without closing its connections, which with ``timeout=None`` the
  driver would wait for for ever; or ``future_full_throttle`` once it has sent every request,
  as it counts their ends only then). Requests sent count only while ``reachable()`` says a host
  is up: ``future_full_throttle`` sending into a dead node (every request failing at once, none
  of it counted until it has sent them all) is a stall, or
* no request ended for ``failing_s`` and no node accepts a connection for ``failing_s`` (``probe``, tried
  at most once a second while no request ends). The driver marks a host down only once its event loop
  reads the closed socket, and it first decodes every answer the node sent before it died: a
  connection flooded with requests can hold megabytes of them, and the driver's reader copies what is
  left of its buffer after each message, so that can take minutes, with responses decoded throughout.

Giving up sets the run's stop event: every pattern then stops issuing requests and returns
once its requests in flight end. If it has not returned ``grace_s`` later, its in-flight work
is abandoned: ``on_abandon`` is called from the watchdog's thread (the run's process reports
its partial measurement and exits; see :mod:`profiling.harness.child`).
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Callable

from .patterns import Tally

FAILING_S = 5.0
STALLED_S = 20.0
GRACE_S = 5.0
POLL_S = 0.25
PROBE_S = 1.0


def _no_progress() -> int:
    return 0


def always_reachable() -> bool:
    return True


class Watchdog:
    """Watches one pass of a pattern (a ``with`` block); ``reason`` says why it gave up, if it did."""

    def __init__(self, tally: Tally, stop: threading.Event, *, progress: Callable[[], int] = _no_progress,
                 reachable: Callable[[], bool] = always_reachable, on_abandon: Callable[[str], None] | None = None,
                 failing_s: float = FAILING_S, stalled_s: float = STALLED_S, grace_s: float = GRACE_S,
                 progress_is_answers: bool = False, probe: Callable[[], bool] | None = None) -> None:
        self.tally, self.stop, self.progress, self.on_abandon = tally, stop, progress, on_abandon
        # ``progress`` counts the responses decoded (one process's driver), not tasks of other processes
        self.progress_is_answers = progress_is_answers
        self.reachable = reachable
        self.probe = probe  # whether some node accepts a connection (None: not probed)
        self.failing_s, self.stalled_s, self.grace_s = failing_s, stalled_s, grace_s
        self.reason: str | None = None
        self._ended = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="pf-watchdog", daemon=True)

    def __enter__(self) -> Watchdog:
        self._thread.start()
        return self

    def __exit__(self, _type: type[BaseException] | None, _exc: BaseException | None,
                 _tb: TracebackType | None) -> None:
        self._ended.set()
        self._thread.join()

    def _watch(self) -> None:
        t = self.tally
        last = (t.ok, t.errors, t.sent, self.progress())
        moved_at = time.monotonic()
        ok_errors = t.errors  # errors counted when the last success was seen
        failing_since: float | None = None
        down_since: float | None = None
        answered, answered_at = (last[0], last[1], last[3]), moved_at
        ended, ended_at = (last[0], last[1]), moved_at
        probed_at = 0.0
        refused_since: float | None = None
        while not self._ended.wait(POLL_S):
            now = time.monotonic()
            if (t.ok, t.errors) != ended:
                ended, ended_at, refused_since = (t.ok, t.errors), now, None
            elif self.probe is not None and now - ended_at >= self.failing_s and now - probed_at >= PROBE_S:
                probed_at = now
                refused_since = None if self.probe() else (refused_since or now)
                if refused_since is not None and now - refused_since >= self.failing_s:
                    self._give_up(f"requests failing: no node accepted a connection for {self.failing_s:.0f} s "
                                  f"and no request ended")
                    return
            reachable = self.reachable()
            down_since = None if reachable else (down_since or now)
            seen = (t.ok, t.errors, t.sent if reachable else last[2], self.progress())
            if seen != last:
                moved_at = now
            if (seen[0], seen[1], seen[3]) != answered:
                answered, answered_at = (seen[0], seen[1], seen[3]), now
            if seen[0] != last[0]:
                ok_errors, failing_since = seen[1], None
            elif seen[1] != ok_errors and failing_since is None:
                failing_since = now
            last = seen
            if failing_since is not None and now - failing_since >= self.failing_s:
                kinds = ", ".join(f"{k}: {n}" for k, n in sorted(t.error_kinds.items()))
                self._give_up(f"requests failing: {seen[1] - ok_errors} errors and no success for "
                              f"{self.failing_s:.0f} s ({kinds})")
                return
            if down_since is not None and now - down_since >= self.failing_s:
                self._give_up(f"requests failing: no host up for {self.failing_s:.0f} s "
                              f"({seen[1] - ok_errors} errors and no success so far)")
                return
            if now - moved_at >= self.stalled_s:
                self._give_up(f"nothing answered for {self.stalled_s:.0f} s "
                              "(no request sent or ended, no response decoded)")
                return
            # requests still sent (a pattern that counts its outcomes only once everything is sent), but
            # no response decoded (where responses are counted: some were) and none ended: a node gone
            # while the driver still holds it up
            if self.progress_is_answers and seen[3] and now - answered_at >= self.stalled_s:
                self._give_up(f"nothing answered for {self.stalled_s:.0f} s "
                              f"(requests sent, no response decoded, none ended)")
                return

    def _give_up(self, reason: str) -> None:
        self.reason = reason
        self.stop.set()
        if self._ended.wait(self.grace_s) or self.on_abandon is None:
            return
        self.reason = f"{reason}; its requests in flight abandoned after {self.grace_s:.0f} s more"
        self.on_abandon(self.reason)
