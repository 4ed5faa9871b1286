"""The load generator's figures: percentiles of latency, and the table that compares each switch position
with the driver and its hand-written bridge."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

#: the switch positions' names, the reference first
REFERENCE = "driver+bridge"
POSITIONS = {"off": REFERENCE, "on": "pyfactories+await"}


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile: the smallest value with at least ``fraction`` of the values at or
    below it (``fraction`` in (0, 1]); of no values, nan."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


@dataclass
class Round:
    """One measured round of one position: its requests, their latencies (s), the wall time (s) and the
    service process's CPU (ns: user + system) over it."""

    position: str
    requests: int
    errors: int
    wall_s: float
    cpu_ns: float
    latencies: list[float] = field(default_factory=list)

    @property
    def cpu_us_per_request(self) -> float:
        return self.cpu_ns / 1e3 / self.requests if self.requests else math.nan


@dataclass
class Summary:
    """A position's rounds together: requests per second over their wall time, latency percentiles of
    every request, CPU per request over all of them, and its rounds' spread."""

    position: str
    rounds: int
    requests: int
    errors: int
    requests_per_s: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    cpu_us_per_request: float
    cpu_us_range: tuple[float, float]
    cpu_vs_reference: float = math.nan
    requests_per_s_vs_reference: float = math.nan

    @property
    def name(self) -> str:
        return POSITIONS.get(self.position, self.position)


def summarize(rounds: Sequence[Round]) -> list[Summary]:
    """One summary per position, in the order the positions first appear, each compared with the
    reference's (the ``off`` position) when it was measured."""
    out: dict[str, Summary] = {}
    for position in dict.fromkeys(r.position for r in rounds):
        mine = [r for r in rounds if r.position == position]
        requests = sum(r.requests for r in mine)
        latencies = sorted(x for r in mine for x in r.latencies)
        per_round = [r.cpu_us_per_request for r in mine]
        out[position] = Summary(
            position, len(mine), requests, sum(r.errors for r in mine),
            requests / sum(r.wall_s for r in mine), *(percentile(latencies, f) * 1e3 for f in (0.5, 0.9, 0.99)),
            sum(r.cpu_ns for r in mine) / 1e3 / requests, (min(per_round), max(per_round)))
    reference = out.get("off")
    for summary in out.values():
        if reference:
            summary.cpu_vs_reference = summary.cpu_us_per_request / reference.cpu_us_per_request
            summary.requests_per_s_vs_reference = summary.requests_per_s / reference.requests_per_s
    return list(out.values())


COLUMNS = ("service", "rounds", "requests", "errors", "req/s", "p50 ms", "p90 ms", "p99 ms",
           "CPU µs/req (rounds)", "CPU vs. driver+bridge", "req/s vs. driver+bridge")


def table(summaries: Sequence[Summary]) -> str:
    """A plain-text table, one line per position."""
    lines = [COLUMNS] + [(
        s.name, str(s.rounds), str(s.requests), str(s.errors), f"{s.requests_per_s:.0f}",
        f"{s.p50_ms:.2f}", f"{s.p90_ms:.2f}", f"{s.p99_ms:.2f}",
        f"{s.cpu_us_per_request:.0f} ({s.cpu_us_range[0]:.0f}–{s.cpu_us_range[1]:.0f})",
        _ratio(s.cpu_vs_reference), _ratio(s.requests_per_s_vs_reference)) for s in summaries]
    widths = [max(len(line[k]) for line in lines) for k in range(len(COLUMNS))]
    return "\n".join("  ".join(cell.rjust(w) if k else cell.ljust(w) for k, (cell, w) in enumerate(zip(line, widths)))
                     for line in lines)


def _ratio(value: float) -> str:
    return "" if math.isnan(value) else f"{value:.2f}x"


def as_json(summaries: Sequence[Summary]) -> list[dict]:
    return [{"service": s.name, "pyfactories": s.position, "rounds": s.rounds, "requests": s.requests,
             "errors": s.errors, "requests_per_s": s.requests_per_s, "p50_ms": s.p50_ms, "p90_ms": s.p90_ms,
             "p99_ms": s.p99_ms, "cpu_us_per_request": s.cpu_us_per_request,
             "cpu_us_per_request_range": list(s.cpu_us_range), "cpu_vs_driver_bridge": _or_none(s.cpu_vs_reference),
             "requests_per_s_vs_driver_bridge": _or_none(s.requests_per_s_vs_reference)} for s in summaries]


def _or_none(value: float) -> float | None:
    return None if math.isnan(value) else value
