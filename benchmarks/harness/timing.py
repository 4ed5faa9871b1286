"""The timing loop of the offline depths: calibrated loops, warm-up, interleaved rounds, a settled heap."""

from __future__ import annotations

import gc
import time
from typing import Any, Callable, Sequence

perf_counter_ns = time.perf_counter_ns


def time_loops(fn: Callable[[Any, Any], Any], a: Any, b: Any, loops: int) -> int:
    """Nanoseconds for ``loops`` calls of ``fn(a, b)`` (the result of each call is dropped)."""
    it = range(loops)
    t0 = perf_counter_ns()
    for _ in it:
        fn(a, b)
    return perf_counter_ns() - t0


def time_loops_kept(fn: Callable[[Any, Any], Any], a: Any, b: Any, loops: int) -> int:
    """Like :func:`time_loops`, but every result stays alive until the sample ends.

    With the results dropped at once, the rows of one call are freed before the
    next call: plain tuples then come back from CPython's tuple free list (up to
    2,000 per length) and never count towards a collection, which instances of a
    namedtuple class cannot do. Keeping the results shows the cost without that
    recycling, as when an application holds on to its rows.
    """
    it = range(loops)
    sink: list[Any] = []
    keep = sink.append
    t0 = perf_counter_ns()
    for _ in it:
        keep(fn(a, b))
    dt = perf_counter_ns() - t0
    del sink[:]
    return dt


def calibrate(fn: Callable[[Any, Any], Any], a: Any, b: Any, target_ns: int, max_loops: int = 1 << 24,
              timer: Callable[[Callable[[Any, Any], Any], Any, Any, int], int] = time_loops) -> int:
    """Loops per sample so that one sample lasts about ``target_ns``; warms up on the way.

    The first call fills the caches (our factories' column-set caches, the
    interpreter's specialisations); the loop count grows tenfold until a sample
    is long enough to extrapolate from (the quickest of three at that count), then one full sample
    is run and dropped.
    """
    fn(a, b)
    loops = 1
    while True:
        dt = timer(fn, a, b, loops)
        if dt * 10 >= target_ns or loops >= max_loops:
            # extrapolated from the quickest of three: one sample taken while the process waited for
            # a CPU (a shared machine) would make every later sample too short
            dt = min(dt, timer(fn, a, b, loops), timer(fn, a, b, loops))
            loops = max(1, min(max_loops, round(loops * target_ns / max(dt, 1))))
            break
        loops *= 10
    timer(fn, a, b, loops)  # warm-up sample, not kept
    return loops


Cell = tuple  # (name, fn, a, b) or (name, fn, a, b, keep_results)


def interleaved_samples(cells: Sequence[Cell], rounds: int, target_ns: int
                        ) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Time every cell ``rounds`` times, taking turns: A B C, B C A, C A B, ...

    A cell is ``(name, fn, a, b)``, timed as ``fn(a, b)`` with each result
    dropped at once, or ``(name, fn, a, b, True)`` to keep the results of a
    sample alive (:func:`time_loops_kept`). Returns nanoseconds per call, one
    value per round, for each cell name, and the loops per sample. Rotating the
    order means no cell always runs right after the same neighbour (whose
    garbage or cache misses it might inherit).
    """
    timers = {c[0]: (time_loops_kept if len(c) > 4 and c[4] else time_loops) for c in cells}
    loops = {c[0]: calibrate(c[1], c[2], c[3], target_ns, timer=timers[c[0]]) for c in cells}
    samples: dict[str, list[float]] = {c[0]: [] for c in cells}
    n = len(cells)
    for r in range(rounds):
        k = r % n if n else 0
        for cell in list(cells[k:]) + list(cells[:k]):
            name, fn, a, b = cell[:4]
            samples[name].append(timers[name](fn, a, b, loops[name]) / loops[name])
    return samples, loops


def clear_caches() -> None:
    """Empty our factories' caches (both implementations), so every worker starts from the same state."""
    import pyfactories
    from pyfactories.rows import _rows_py

    pyfactories.cache_clear()
    _rows_py.cache_clear()


def settle_heap() -> None:
    """Collect, then freeze what is alive, so the collector skips the benchmark's inputs.

    The collector stays enabled (row factories run with it enabled in a real
    service); it only stops rescanning the long-lived inputs at every collection.
    """
    gc.collect()
    gc.freeze()
