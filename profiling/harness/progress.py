"""A session's progress, one line per run: what ran, its CPU per query, and about how long the rest
will take (the mean time of the runs so far, times the runs left, plus a node warm-up like the first
one for each workload still to come).

    [7/36] read callback_full_pipeline everything_on (round 2/3): 41 µs/query · about 2 min 10 s left
"""

from __future__ import annotations

import time
from typing import Any, Callable


def duration(seconds: float) -> str:
    """``seconds`` as a person says a time left: ``45 s``, ``2 min 10 s``, ``1 h 5 min``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, rest = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def left(run_seconds: list[float], runs_left: int, warmups_left: int = 0, warmup_s: float = 0.0) -> float | None:
    """Seconds still to go: the mean of ``run_seconds`` per run left, plus ``warmup_s`` per warm-up
    left; None before any run ended (nothing to estimate from)."""
    if not run_seconds:
        return None
    return sum(run_seconds) / len(run_seconds) * runs_left + warmups_left * warmup_s


def line(number: int, total: int, what: str, cpu_us_per_query: float | None, seconds_left: float | None,
         problem: str | None = None) -> str:
    """One run's progress line."""
    result = problem or ("no queries measured" if cpu_us_per_query is None else f"{cpu_us_per_query:.0f} µs/query")
    eta = "" if seconds_left is None else (" · done" if number >= total else f" · about {duration(seconds_left)} left")
    return f"[{number}/{total}] {what}: {result}{eta}"


class Progress:
    """The clock of a session's runs: :meth:`ran` after each run gives its line."""

    def __init__(self, total: int, workloads: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.workloads_left, self.clock = total, workloads, clock
        self.runs: list[float] = []
        self.warmup_s = 0.0
        self.started = clock()

    def warmed(self, seconds: float) -> None:
        """A workload's node warm-up took ``seconds`` (not a run: it is counted apart)."""
        self.warmup_s = max(self.warmup_s, seconds)
        self.workloads_left = max(0, self.workloads_left - 1)
        self.started += seconds

    def ran(self, number: int, what: str, row: dict[str, Any]) -> str:
        now = self.clock()
        self.runs.append(now - self.started)
        self.started = now
        problem = f"FAILED: {row['failed']}" if row.get("failed") else None
        eta = left(self.runs, self.total - number, self.workloads_left, self.warmup_s)
        return line(number, self.total, what, row.get("cpu_us_per_op"), eta, problem)
