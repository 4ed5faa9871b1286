"""Warming up before anything is measured: the node, until its throughput holds steady, and each
run's client, with its own pattern.

A node that has just started runs its first requests in the JVM's interpreter and compiles the hot
paths as they get hot; its first minutes also flush and compact. Whatever is measured first then
pays for that: on a fresh node the first combination of a profile read about 1.8x the CPU per
operation of the next one, and the first factory of an end-to-end round looked cheaper than
``tuple_factory``. So the profiler (once per workload, before its first run) and the end-to-end
benchmark (per workload, before its rounds) first put a steady load of the workload's own requests
on the node (:func:`warm_with`), count its throughput in windows of half a second and stop when it
has stopped climbing (:func:`until_stable`), after a minimum time and before a maximum one. A node
that is already warm settles at once, so the phase then costs about its minimum time.

Each run's child process also warms its own client (:func:`warm_client`): connections, prepared
statements, the driver's caches and the pattern's own code path (threads, callbacks, waits) run
``warmup`` operations of the measured pattern before the measurement starts.
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

#: Windows of about this many seconds; the node is warm when the median throughput of the last
#: STEADY_WINDOWS windows is no longer above that of the STEADY_WINDOWS before them by more than
#: STEADY_TOLERANCE: it has stopped climbing. (A shared machine's noise moves single windows by more
#: than any warm-up does late in it; medians of a few windows see through that.)
WINDOW_S = 0.5
STEADY_WINDOWS = 3
STEADY_TOLERANCE = 0.05
#: Requests the warm-up keeps in flight (callback chains), at most.
IN_FLIGHT = 64


@dataclass(frozen=True)
class Warmup:
    """What a warm-up phase did: each window's throughput, how long it took, whether it settled."""

    rates: list[float]  # requests per second, one per window
    seconds: float
    steady: bool

    def record(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        if not self.rates:
            return f"{self.seconds:.1f} s, no windows"
        last = statistics.median(self.rates[-STEADY_WINDOWS:])
        state = "no longer climbing" if self.steady else f"still climbing after {self.seconds:.0f} s (measuring anyway)"
        return (f"{self.seconds:.1f} s, {len(self.rates)} windows: {self.rates[0]:.0f} requests/s in the first, "
                f"{last:.0f} (median) in the last {min(STEADY_WINDOWS, len(self.rates))}, {state}")


def steady(rates: list[float], windows: int = STEADY_WINDOWS, tolerance: float = STEADY_TOLERANCE) -> bool:
    """Whether throughput has stopped climbing: the median of the last ``windows`` rates is at most
    ``tolerance`` above the median of the ``windows`` before them."""
    if len(rates) < 2 * windows:
        return False
    last = statistics.median(rates[-windows:])
    before = statistics.median(rates[-2 * windows:-windows])
    return last > 0 and last <= before * (1 + tolerance)


def until_stable(window: Callable[[float], int], min_s: float, max_s: float, window_s: float = WINDOW_S,
                 clock: Callable[[], float] = time.perf_counter,
                 cancelled: Callable[[], bool] = lambda: False) -> Warmup:
    """Call ``window(seconds)`` (which runs load for about that long and returns the requests it
    completed) until the throughputs are :func:`steady` and ``min_s`` has passed, or ``max_s`` has
    (or ``cancelled()`` says so: Ctrl-C)."""
    if min_s < 0 or max_s < min_s or window_s <= 0:
        raise ValueError(f"warm-up bounds must satisfy 0 <= min ({min_s}) <= max ({max_s}), window > 0")
    rates: list[float] = []
    start = clock()
    while True:
        t0 = clock()
        done = window(window_s)
        took = clock() - t0
        rates.append(done / took if took > 0 else 0.0)
        elapsed = clock() - start
        settled = steady(rates)
        if (settled and elapsed >= min_s) or elapsed >= max_s or cancelled():
            return Warmup(rates, elapsed, settled)


def warm_with(session: Any, request: Callable[[int], Any], min_s: float, max_s: float,
              cancelled: Callable[[], bool] = lambda: False, in_flight: int = IN_FLIGHT) -> Warmup:
    """:func:`until_stable` over a steady load: ``in_flight`` callback chains of ``request(i)`` (``i``
    counting up) run on a thread of their own for the whole phase, and each window counts the requests
    completed in it (no draining between windows). Raises when every request of a window failed."""
    from .patterns import PATTERNS, Context

    ctx = Context(session, request, concurrency=in_flight)
    load = threading.Thread(target=PATTERNS["callback_full_pipeline"].body, args=(ctx, range(10**15)),
                            name="warm-up load", daemon=True)
    seen = {"ok": 0, "errors": 0}

    def window(seconds: float) -> int:
        time.sleep(seconds)
        ok, errors = ctx.tally.ok - seen["ok"], ctx.tally.errors - seen["errors"]
        seen.update(ok=ctx.tally.ok, errors=ctx.tally.errors)
        if errors and not ok:
            raise RuntimeError(f"warm-up: all {errors} requests of a window failed, the first with "
                               f"{ctx.tally.first_error}")
        return ok

    load.start()
    try:
        return until_stable(window, min_s, max_s, cancelled=cancelled)
    finally:
        ctx.stop.set()  # the chains stop issuing; those in flight finish
        load.join(60)


def warm_node(settings: Any, workload: Any, min_s: float, max_s: float,
              cancelled: Callable[[], bool] = lambda: False) -> Warmup:
    """The profiler's node warm-up for one workload: its own requests (``workload.requests``) from a
    session of the run's settings (``spec.RunSettings``: hosts, reactor, protocol), rows as tuples."""
    from cassandra.query import tuple_factory

    from .client import connection_class
    from ..cluster import connect

    options: dict[str, Any] = {"connection_class": connection_class(settings.connection_class, settings.connection),
                               "row_factory": tuple_factory}
    if settings.protocol_version:
        options["protocol_version"] = settings.protocol_version
    cluster, session = connect(settings.contact(), **options)
    try:
        request = workload.requests(session, lambda bind: bind)
        return warm_with(session, request, min_s, max_s, cancelled)
    finally:
        cluster.shutdown()


def session_warm_up(opts: Any, kind: str, cancelled: Callable[[], bool]) -> dict[str, Any]:
    """The profiler's node warm-up before the first run of workload ``kind`` (``runner.Options``:
    ``warmup_s`` at least, ``warmup_max_s`` at most), said as it goes; what it did, for the rows."""
    if opts.warmup_s <= 0:
        return {"skipped": True}
    print(f"[profiling] warming the node up with {kind}s: at least {opts.warmup_s:g} s, until its "
          f"throughput stops climbing (at most {max(opts.warmup_s, opts.warmup_max_s):g} s)", flush=True)
    try:
        done = warm_node(opts, opts.workload(kind), opts.warmup_s, max(opts.warmup_s, opts.warmup_max_s),
                         cancelled=cancelled)
    except Exception as exc:  # the runs will meet the same problem and report it as theirs
        print(f"  warm-up failed: {type(exc).__name__}: {exc}", flush=True)
        return {"failed": f"{type(exc).__name__}: {exc}"}
    print(f"  {done.describe()}", flush=True)
    return done.record()


def warm_client(client: Any, spec: Any, stop: threading.Event) -> None:
    """The run's own pattern over ``spec.warmup`` operations (not measured: the measurement takes its
    clocks after this), so its code path, connections and caches are warm when it starts. Its requests
    are the measured ones' (``client.context``: their timeout, blocking calls timed only when
    instrumented); ``stop`` (the process's: Ctrl-C) ends it early."""
    from .patterns import PATTERNS, run

    if spec.warmup <= 0:
        return
    ctx = client.context(concurrency=spec.concurrency, retries=spec.retries, stop=stop)
    run(PATTERNS[spec.pattern].body, ctx, spec.warmup, spec.threads)


def settings(opts: Any) -> dict[str, str]:
    """The warm-up and repeat settings of a profiling session, for its report's header line."""
    node = (f"node {opts.warmup_s:g}-{max(opts.warmup_s, opts.warmup_max_s):g} s per workload until steady"
            if opts.warmup_s > 0 else "node: none")
    return {"warm-up": f"{node}; client {opts.warmup} ops of the run's pattern",
            "repeats": f"{opts.repeat}, round-robin" if opts.repeat > 1 else "1"}
