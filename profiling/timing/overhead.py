"""The instrumentation's own cost: CPU that the timed regions add to every query.

Every timed region is a wrapper (:mod:`profiling.timing.instrument`) that reads the thread's CPU
clock twice (a system call each on Linux: there is no vDSO for thread CPU clocks) and updates
its thread's counters around the call it wraps. :func:`calibrate` measures what one such
wrapper adds to a call, in the run's own process before the measured run: a loop of the
driver's own work (encoding a query message) through a timed region against the same loop
without it, on the thread's CPU clock, a few rounds alternated, the fastest round of each kept
(the least disturbed by the other processes sharing the CPU). Real driver work between the
region's clock reads makes the calibration see some of what the system calls cost the code
after them (caches, TLB), which a loop around an empty function misses. The recorder counts
every region call (the ``calls`` of a snapshot, whatever regions it has), so

    cost per query = ns per region call x region calls per query

which :func:`cost` reports in µs per query and as a share of the measured CPU per query.
A run's caches are colder than a loop's, so take it as a lower bound; ``--instrumentation
off`` runs without any wrapper (and without shares), and the difference in CPU per query
between the two is the direct measure.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from . import instrument

METHOD = (
    "the cost of one timed region, calibrated in the run's own process before the run (a loop "
    "of the driver encoding a query message, through a region wrapper and without it, thread CPU "
    "clock, fastest of alternated rounds), times the region calls per query the recorder counted; "
    "a lower bound, since a run's caches are colder than a loop's; --instrumentation off runs "
    "without any wrapper, for the direct comparison")

_CALLS = 2_000
_ROUNDS = 7


def driver_work() -> Callable[[int], Any]:
    """``work(k)``: a piece of the driver's own request path (a query message encoded)."""
    from cassandra import ConsistencyLevel
    from cassandra.protocol import ProtocolHandler, QueryMessage

    encode = ProtocolHandler.encode_message

    def work(k: int) -> Any:
        message = QueryMessage(f"INSERT INTO ks.t (p, c, v) VALUES ({k}, {k}, 'value-{k:010d}')",
                               ConsistencyLevel.ONE)
        return encode(message, k % 1024, 4, None, False)

    return work


def _loop(fn: Callable[[int], Any], calls: int) -> int:
    """CPU ns of ``calls`` calls of ``fn`` on this thread."""
    clock = time.thread_time_ns
    t0 = clock()
    for k in range(calls):
        fn(k)
    return clock() - t0


def calibrate(calls: int = _CALLS, rounds: int = _ROUNDS, work: Callable[[int], Any] | None = None) -> float:
    """CPU ns one timed region adds to the call it wraps (``work``, the driver's by default),
    timed in a private recorder, so the run's counts are untouched."""
    if calls < 1 or rounds < 1:
        raise ValueError("calibrate needs at least one call and one round")
    work = work or driver_work()
    timed = instrument.timed_bind(instrument.Recorder(), work)
    bare = wrapped = None
    for _ in range(rounds):
        b, w = _loop(work, calls), _loop(timed, calls)
        bare = b if bare is None else min(bare, b)
        wrapped = w if wrapped is None else min(wrapped, w)
    assert bare is not None and wrapped is not None
    return max(0.0, (wrapped - bare) / calls)


def cost(instrumented: dict[str, Any], region_call_ns: float | None, queries: int,
         cpu_us_per_op: float | None) -> dict[str, Any] | None:
    """The instrumentation's cost per query of one run: ``None`` without a calibration
    (a run without instrumentation) or without queries."""
    if region_call_ns is None or queries <= 0:
        return None
    calls = sum(instrumented.get("calls", {}).values())
    per_query = calls / queries
    us = region_call_ns * per_query / 1000
    return {"region_call_ns": round(region_call_ns, 1), "calls_per_query": round(per_query, 2),
            "us_per_query": round(us, 3),
            "share_of_cpu": us / cpu_us_per_op if cpu_us_per_op else None}


def describe(row: dict[str, Any]) -> str:
    """The cost of a result row, as the reports print it."""
    c = row.get("instrumentation_cost")
    if row.get("instrumentation") == "off":
        return "instrumentation off: no wrappers, no instrumented shares"
    if not c:
        return "instrumentation cost: -"
    share = "" if c["share_of_cpu"] is None else f" = {c['share_of_cpu'] * 100:.1f}% of CPU/op"
    where = f" {c['calibrated']}" if c.get("calibrated") else ""
    return (f"instrumentation >= {c['us_per_query']:.2f} µs/query{share} ({c['calls_per_query']:g} region "
            f"calls/query x {c['region_call_ns']:.0f} ns, calibrated{where})")
