"""The process-pool patterns of the multiprocessing write-up: a pool whose workers build
their own Session.

A pool pattern (``Pattern.multiprocess``) hands its operations to the workers in tasks of
``Pattern.chunk`` operations (``--concurrency`` when it names none), and each worker runs
the pattern's body over its task: ``multiprocess_execute`` is ``sync`` over tasks of 10 (as
the write-up's ``pool.map(..., batch_size=10)``), ``multiprocess_concurrent`` is
``execute_concurrent`` over tasks of ``--concurrency``.

Workers start from a ``forkserver`` (no driver state, threads or sockets are
inherited; the Session is created in the pool initializer), ignore SIGINT (the
parent stops feeding them instead) and send back, with every task, their
cumulative instrumentation since they became ready, so the parent can add
the workers' CPU to its own.
"""

from __future__ import annotations

import collections
import multiprocessing
import os
import signal
import threading
from typing import Any

from ..timing import instrument
from . import client as client_mod
from .patterns import PATTERNS, Tally
from .spec import RunSpec

_client: client_mod.Client | None = None
_state: dict[str, Any] = {}


def _init(spec: RunSpec, ready: Any, failures: Any) -> None:
    global _client
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    client_mod.die_with_parent()  # the forkserver: it ends when the run's process does
    client_mod.allow_profiling()
    try:
        _client = client_mod.open_client(spec)
        client_mod.warm_up(_client, spec.warmup // max(1, spec.processes))
        _state.update(base=_client.recorder.snapshot(), seq=0, profiler=None,
                      prof_path=None)
    except Exception as exc:
        failures.put(f"worker {os.getpid()}: {type(exc).__name__}: {exc}")
    finally:
        ready.release()


def _task(pattern: str, start: int, stop: int, concurrency: int, prof_dir: str | None) -> tuple:
    if _client is None:
        raise RuntimeError("this pool worker failed to connect (see the first failure)")
    if prof_dir and _state["profiler"] is None:
        import cProfile

        _state["profiler"] = cProfile.Profile()
        _state["prof_path"] = os.path.join(prof_dir, f"worker-{os.getpid()}.prof")
    profiler = _state["profiler"]
    ctx = _client.context(concurrency=concurrency)
    if profiler:
        profiler.enable()
    PATTERNS[pattern].body(ctx, range(start, stop))
    if profiler:
        profiler.disable()
        profiler.dump_stats(_state["prof_path"])
    _state["seq"] += 1
    delta = instrument.delta(_state["base"], _client.recorder.snapshot())
    return os.getpid(), _state["seq"], ctx.tally.to_dict(), delta


def _untimed(fn: Any, *args: Any) -> Any:
    return fn(*args)


class PoolRun:
    """The pool of one run; ``start`` before the measurement, ``run`` measured."""

    def __init__(self, spec: RunSpec) -> None:
        self.spec = spec
        self.processes = max(1, spec.processes)
        self.recorder = instrument.Recorder()
        self.pool: Any = None
        self.before = self.recorder.snapshot()
        self.latest: dict[int, tuple[int, dict[str, Any]]] = {}

    def start(self, timeout: float = 180.0) -> None:
        mp = multiprocessing.get_context("forkserver")
        ready, failures = mp.Semaphore(0), mp.Queue()
        self.pool = mp.Pool(self.processes, initializer=_init, initargs=(self.spec, ready, failures))
        for _ in range(self.processes):
            if not ready.acquire(timeout=timeout):
                raise RuntimeError(f"pool workers not ready after {timeout:.0f} s")
        if not failures.empty():
            raise RuntimeError(failures.get())

    def run(self, stop: threading.Event, tally: Tally, prof_dir: str | None = None) -> None:
        """Feed the pool (at most two tasks per worker queued) until done or stopped."""
        n, pattern = self.spec.num_ops, self.spec.pattern
        chunk = PATTERNS[pattern].chunk or self.spec.concurrency
        bounds = iter([(s, min(s + chunk, n)) for s in range(0, n, chunk)])
        self.latest = {}
        self.before = self.recorder.snapshot()
        wait = self.recorder.wait if self.spec.instrumentation else _untimed
        pending: collections.deque[Any] = collections.deque()
        while True:
            while len(pending) < 2 * self.processes and not stop.is_set():
                b = next(bounds, None)
                if b is None:
                    break
                pending.append(self.pool.apply_async(
                    _task, (pattern, *b, self.spec.concurrency, prof_dir)))
            if not pending:
                break
            pid, seq, counts, delta = wait(pending.popleft().get)
            tally.add(counts)
            if seq > self.latest.get(pid, (0, None))[0]:
                self.latest[pid] = (seq, delta)

    def delta(self) -> dict[str, Any]:
        """The pool's instrumentation since the last ``run`` began: this process's own, and each
        worker's as of its latest finished task."""
        own = instrument.delta(self.before, self.recorder.snapshot())
        combined = instrument.combine([own] + [d for _seq, d in self.latest.values()])
        combined["processes"] = len(self.latest)
        return combined

    def progress(self) -> int:
        """Tasks finished so far (for the watchdog)."""
        return int(self.recorder.snapshot()["calls"]["wait"])

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool.join()
