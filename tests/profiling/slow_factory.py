"""A row factory that burns CPU per row, in pure Python (no system calls: kernel
time is accounted apart from user time), and says what it burned.

Imported by the profiled child process as
``tests.profiling.slow_factory:slow_tuple_factory``; ``PF_SLOW_ROW_LOOPS`` sets
the loop iterations per row, and with ``PF_SLOW_ROW_LOG`` set the process
writes there, at exit, the CPU ns it burned and the number of rows, in all and
call by call (``calls``: ``[ns, rows]`` in call order, so a test can take the
calls of one phase, such as the last ``n`` queries of a run).
"""

import atexit
import json
import os
import time

LOOPS = int(os.environ.get("PF_SLOW_ROW_LOOPS", "2000"))
_burned = {"ns": 0, "rows": 0, "calls": []}


def burn(loops: int = LOOPS) -> None:
    for _ in range(loops):
        pass


def slow_tuple_factory(colnames, rows):
    t0 = time.thread_time_ns()
    for _ in rows:
        burn()
    ns = time.thread_time_ns() - t0
    _burned["ns"] += ns
    _burned["rows"] += len(rows)
    _burned["calls"].append([ns, len(rows)])
    return rows


def loops_for(ns: int) -> int:
    """Iterations that cost about ``ns`` here."""
    t0 = time.thread_time_ns()
    for _ in range(200):
        burn(1000)
    return max(1, round(ns / ((time.thread_time_ns() - t0) / 200) * 1000))


@atexit.register
def _log() -> None:
    path = os.environ.get("PF_SLOW_ROW_LOG")
    if path and _burned["rows"]:
        with open(path, "w") as f:
            json.dump(_burned, f)
