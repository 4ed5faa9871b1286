"""The CPU cost of row factories on one result, measured side by side.

Standalone (no imports from the package): the ``record`` hook loads it by path inside the
profiled process, to measure the factory in use there on the rows it saw.
"""

from __future__ import annotations

import time
from typing import Any, Callable


def costs(factories: dict[str, Callable[[Any, Any], Any]], colnames: list[str], rows: list[Any],
          budget_s: float = 0.03) -> dict[str, float]:
    """Thread CPU ns per call of each factory on ``(colnames, rows)``: the best of interleaved
    rounds (each round calls every factory on the same lists), within about ``budget_s`` per
    factory."""
    best = dict.fromkeys(factories, float("inf"))
    spent = dict.fromkeys(factories, 0)
    rounds = 0
    while rounds < 3 or min(spent.values()) < budget_s * 1e9:
        for name, fn in factories.items():
            calls = 1 if spent[name] > budget_s * 1e8 else 5
            t0 = time.thread_time_ns()
            for _ in range(calls):
                fn(colnames, rows)
            dt = time.thread_time_ns() - t0
            spent[name] += dt
            best[name] = min(best[name], dt / calls)
        rounds += 1
        if rounds >= 200:
            break
    return best
