"""One run (pattern x factory x workload) in its own process: ``python -m profiling.harness.child``.

The parent (:mod:`profiling.harness.runner`) writes the run spec as one JSON line on
stdin and talks to this process by lines: this process prints
``@@pf ready {...}`` once connected and warmed up (so py-spy attaches after
the setup, which is not measured), waits for ``go``, runs the pattern, prints
``@@pf done {...}`` and then obeys ``cprofile N PATH`` (the pattern again for N ops
under cProfile, written to PATH) or ``exit``. SIGINT stops the pattern early; the partial result is
still reported. So is a pass whose requests fail or stall (a node that died): the
:mod:`profiling.harness.watchdog` stops it (abandoning its requests in flight if they do not end), the
result says why (``interrupted_reason``), and the process then exits with ``EXIT_ABANDONED``
without closing its cluster, which could wait on the dead node; the harness ends its process group.
"""

from __future__ import annotations

import cProfile
import dataclasses
import json
import os
import pstats
import resource
import signal
import socket
import sys
import tempfile
import threading
import time
from typing import Any, Callable

from ..timing import instrument, overhead
from . import client as client_mod
from . import multiproc, patterns, warmup, watchdog
from .spec import Measurement, RunSpec

PREFIX = "@@pf "
#: The exit code of a run whose requests failed (its process ends without closing its cluster).
EXIT_ABANDONED = 3
#: How long the watchdog's probe waits for a node to accept a connection.
PROBE_TIMEOUT_S = 1.0


def say(kind: str, payload: dict[str, Any]) -> None:
    sys.stdout.write(f"{PREFIX}{kind} {json.dumps(payload)}\n")
    sys.stdout.flush()


class InProcess:
    def __init__(self, spec: RunSpec, stop: threading.Event) -> None:
        self.spec = spec
        self.pattern = patterns.PATTERNS[spec.pattern]
        self.client = client_mod.open_client(spec)
        warmup.warm_client(self.client, spec, stop)
        self.before = self.client.recorder.snapshot()

    def run(self, stop: threading.Event, tally: patterns.Tally, prof_dir: str | None = None) -> None:
        c = self.client
        ctx = c.context(concurrency=self.spec.concurrency, retries=self.spec.retries, stop=stop, tally=tally)
        self.before = c.recorder.snapshot()
        patterns.run(self.pattern.body, ctx, self.spec.num_ops, self.spec.threads)

    def delta(self) -> dict[str, Any]:
        """The instrumentation's clocks since the last ``run`` began (so far, if it still runs)."""
        delta = instrument.delta(self.before, self.client.recorder.snapshot())
        delta["processes"] = 1
        return delta

    def progress(self) -> int:
        """Responses decoded so far, for the watchdog (0 when not instrumented), which also sees the
        requests sent and ended in the pass's tally."""
        return int(self.client.recorder.snapshot()["calls"]["deserialization"])

    def reachable(self) -> bool:
        """Whether the driver holds any host up (it marks a dead node down once its event loop reads the
        closed socket: at once, unless a backlog of answers is decoded first; see :meth:`accepts`)."""
        return any(host.is_up is not False for host in self.client.cluster.metadata.all_hosts())

    def accepts(self) -> bool:
        """Whether any node the driver knows accepts a TCP connection on its native port: a node gone
        while the driver still decodes what it sent before (see :mod:`profiling.harness.watchdog`)."""
        for host in self.client.cluster.metadata.all_hosts():
            try:
                socket.create_connection((host.endpoint.address, host.endpoint.port), timeout=PROBE_TIMEOUT_S).close()
            except OSError:
                continue
            return True
        return False

    def close(self) -> None:
        self.client.close()


class Pool(multiproc.PoolRun):
    def __init__(self, spec: RunSpec) -> None:
        super().__init__(spec)
        self.start()


class Pass:
    """One pass of the pattern on this (the main) thread, watched by a :class:`Watchdog`.

    Its result is said once: by this thread when the pattern returns, or, when the watchdog
    abandons a pattern stuck on requests that never end, by the watchdog's thread, which then
    ends the process (this thread never leaves the ``with`` block that joins the watchdog).
    """

    def __init__(self, runner: Any, stop: threading.Event, region_call_ns: float | None = None) -> None:
        self.runner, self.stop, self.region_call_ns = runner, stop, region_call_ns
        self.tally = patterns.Tally()
        self.started = time.perf_counter()
        self.reason: str | None = None

    def measurement(self) -> Measurement:
        wall = time.perf_counter() - self.started
        return Measurement.of(self.tally, self.runner.delta(), wall, self.stop.is_set(),
                              resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                              region_call_ns=self.region_call_ns, reason=self.reason)

    def run(self, abandoned: Callable[[Pass], tuple[str, dict[str, Any]]], prof_dir: str | None = None) -> bool:
        """Run the pattern; False if the watchdog gave up on it (its requests failed)."""
        def abandon(reason: str) -> None:
            self.reason = reason
            kind, payload = abandoned(self)
            say(kind, payload)
            if kind == "done":  # the harness's next word (after a measurement it says one more)
                sys.stdin.readline()
            os._exit(EXIT_ABANDONED)

        self.started = time.perf_counter()
        with watchdog.Watchdog(self.tally, self.stop, progress=self.runner.progress,
                               reachable=getattr(self.runner, "reachable", watchdog.always_reachable),
                               on_abandon=abandon, progress_is_answers=isinstance(self.runner, InProcess),
                               probe=getattr(self.runner, "accepts", None)) as dog:
            self.runner.run(self.stop, self.tally, prof_dir)
        self.reason = dog.reason
        return dog.reason is None


def _done(p: Pass) -> tuple[str, dict[str, Any]]:
    return "done", dataclasses.asdict(p.measurement())


def _profile_failed(p: Pass) -> tuple[str, dict[str, Any]]:
    return "failed", {"error": f"the cProfile pass stopped: {p.reason}"}


def cprofile(runner: Any, path: str, stop: threading.Event) -> tuple[str, dict[str, Any]]:
    """The run again under cProfile (threads it does not see are not in the file)."""
    profiler = cProfile.Profile()
    p = Pass(runner, stop)
    with tempfile.TemporaryDirectory() as workers_dir:
        profiler.enable()
        try:
            healthy = p.run(_profile_failed, prof_dir=workers_dir)
        finally:
            profiler.disable()
        if not healthy:
            return _profile_failed(p)
        stats = pstats.Stats(profiler)
        for name in sorted(os.listdir(workers_dir)):
            stats.add(os.path.join(workers_dir, name))
        stats.dump_stats(path)
    return "profiled", {"path": path, "ops": p.tally.ok, "errors": p.tally.errors}


def main() -> int:
    client_mod.die_with_parent()
    client_mod.allow_profiling()
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    spec = RunSpec.from_json(sys.stdin.readline())
    try:
        # before py-spy attaches (at "ready"): the calibration's own samples stay out of the profile
        region_call_ns = overhead.calibrate() if spec.instrumentation else None
        runner: Any = Pool(spec) if spec.multiprocess else InProcess(spec, stop)
    except Exception as exc:
        say("failed", {"error": f"{type(exc).__name__}: {exc}"})
        return 2
    healthy = True
    try:
        client = getattr(runner, "client", None)  # a pool's workers each have their own
        say("ready", {"pid": os.getpid(), "pyfactories": client.parts() if client else None})
        if sys.stdin.readline().strip() != "go":
            return 0
        measured = Pass(runner, stop, region_call_ns)
        healthy = measured.run(_done)
        say(*_done(measured))
        command = sys.stdin.readline().rstrip("\n").split(" ", 2)  # cprofile N PATH
        if command[0] == "cprofile" and healthy and not stop.is_set():
            runner.spec = dataclasses.replace(runner.spec, num_ops=int(command[1]))
            result = cprofile(runner, command[2], stop)
            healthy = result[0] == "profiled"
            say(*result)
    finally:
        if healthy:
            runner.close()
        else:  # the cluster failed: closing could wait on it; the harness ends this process group
            sys.stdout.flush()
            os._exit(EXIT_ABANDONED)
    return 0


if __name__ == "__main__":
    sys.exit(main())
