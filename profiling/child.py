"""One run (pattern x factory x workload) in its own process: ``python -m profiling.child``.

The parent (:mod:`profiling.runner`) writes the run spec as one JSON line on
stdin and talks to this process by lines: this process prints
``@@pf ready {...}`` once connected and warmed up (so py-spy attaches after
the setup, which is not measured), waits for ``go``, runs the pattern, prints
``@@pf done {...}`` and then obeys ``cprofile N PATH`` (the pattern again for N ops
under cProfile, written to PATH) or ``exit``. SIGINT stops the pattern early; the partial result is
still reported.
"""

from __future__ import annotations

import cProfile
import dataclasses
import json
import os
import pstats
import resource
import signal
import sys
import tempfile
import threading
import time
from typing import Any

from . import client as client_mod
from . import instrument, multiproc, overhead, patterns, warmup
from .spec import Measurement, RunSpec

PREFIX = "@@pf "


def say(kind: str, payload: dict[str, Any]) -> None:
    sys.stdout.write(f"{PREFIX}{kind} {json.dumps(payload)}\n")
    sys.stdout.flush()


class InProcess:
    def __init__(self, spec: RunSpec) -> None:
        self.spec = spec
        self.pattern = patterns.PATTERNS[spec.pattern]
        self.client = client_mod.open_client(spec)
        warmup.warm_client(self.client, spec)

    def run(self, stop: threading.Event, prof_dir: str | None = None
            ) -> tuple[patterns.Tally, dict[str, Any]]:
        c = self.client
        ctx = c.context(concurrency=self.spec.concurrency, retries=self.spec.retries, stop=stop)
        before = c.recorder.snapshot()
        patterns.run(self.pattern.body, ctx, self.spec.num_ops, self.spec.threads)
        delta = instrument.delta(before, c.recorder.snapshot())
        delta["processes"] = 1
        return ctx.tally, delta

    def close(self) -> None:
        self.client.close()


class Pool(multiproc.PoolRun):
    def __init__(self, spec: RunSpec) -> None:
        super().__init__(spec)
        self.start()


def measure(runner: Any, stop: threading.Event, region_call_ns: float | None = None) -> Measurement:
    t0 = time.perf_counter()
    tally, delta = runner.run(stop)
    wall = time.perf_counter() - t0
    return Measurement.of(tally, delta, wall, stop.is_set(),
                          resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                          region_call_ns)


def cprofile(runner: Any, path: str, stop: threading.Event) -> dict[str, Any]:
    """The run again under cProfile (threads it does not see are not in the file)."""
    profiler = cProfile.Profile()
    with tempfile.TemporaryDirectory() as workers_dir:
        profiler.enable()
        try:
            tally, _ = runner.run(stop, prof_dir=workers_dir)
        finally:
            profiler.disable()
        stats = pstats.Stats(profiler)
        for name in sorted(os.listdir(workers_dir)):
            stats.add(os.path.join(workers_dir, name))
        stats.dump_stats(path)
    return {"path": path, "ops": tally.ok, "errors": tally.errors}


def main() -> int:
    client_mod.die_with_parent()
    client_mod.allow_profiling()
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    spec = RunSpec.from_json(sys.stdin.readline())
    try:
        # before py-spy attaches (at "ready"): the calibration's own samples stay out of the profile
        region_call_ns = overhead.calibrate() if spec.instrumentation else None
        runner: Any = Pool(spec) if spec.multiprocess else InProcess(spec)
    except Exception as exc:
        say("failed", {"error": f"{type(exc).__name__}: {exc}"})
        return 2
    try:
        say("ready", {"pid": os.getpid()})
        if sys.stdin.readline().strip() != "go":
            return 0
        say("done", dataclasses.asdict(measure(runner, stop, region_call_ns)))
        command = sys.stdin.readline().rstrip("\n").split(" ", 2)  # cprofile N PATH
        if command[0] == "cprofile" and not stop.is_set():
            runner.spec = dataclasses.replace(runner.spec, num_ops=int(command[1]))
            say("profiled", cprofile(runner, command[2], stop))
    finally:
        runner.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
