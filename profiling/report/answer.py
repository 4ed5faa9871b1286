"""The answer first: per workload, the client CPU per query with the driver as configured by default,
where it goes (the share of each phase), and what pyfactories with everything on
(``pyfactories.enable(cluster)``) does to it, measured in the same session: a ratio with its spread over
the rounds, and one line per finding (grouped across patterns) with its measured saving.

Every figure comes from the session's rows (``summary.json``; a row per combination, its rounds under
``repeats``): a ratio of a round is everything on / the driver's default summed over the patterns, both
run in that round; a finding's saving is the driver default's CPU per query in its phases minus
everything on's, per pattern and round.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from ..factories import EVERYTHING_ON
from ..timing.instrument import CATEGORIES

#: The configurations the answer compares, in the order it shows them.
DRIVER_DEFAULT, TUPLE, ALL_ON = "named_tuple", "tuple", EVERYTHING_ON.name
CONFIGURATIONS = {DRIVER_DEFAULT: "driver default (named_tuple_factory, its connection class)",
                  TUPLE: "driver tuple_factory",
                  ALL_ON: "everything on: pyfactories.enable(cluster)"}
WORKLOADS = {"read": "reads", "write": "writes"}
#: How a sentence names each phase.
PHASES = {"deserialization": "deserialization", "row_factory": "row building", "encode": "encode",
          "framing": "framing", "dispatch": "dispatch", "timers": "timers", "request": "request path",
          "socket": "socket", "wait": "waiting", "other": "other"}
#: A finding per group of phases, and what pyfactories has for it. Decoding and row building go
#: together: with the fast path the rows are built while decoding, so row building moves into
#: deserialization.
FINDINGS: list[tuple[tuple[str, ...], str | None]] = [
    (("deserialization", "row_factory"), "named rows built while decoding (the fast path)"),
    (("timers",), "our connection class's timers"),
    (("framing",), "our connection class's compiled framing"),
    (("dispatch",), "our connection class's dispatch and leaner futures"),
    (("socket",), "our connection class's coalesced writes"),
    (("encode",), "compiled binding of prepared statements"),
    (("request",), "leaner futures"),
    (("wait",), None),
    (("other",), None),
]
#: A group of phases below this share of the driver default's CPU is no finding.
MIN_SHARE = 0.05
#: Client CPU per second of wall time under which a run mostly waits.
WAITING_CORES = 0.5
CALL = "`pyfactories.enable(cluster)` before `cluster.connect()`"


@dataclass(frozen=True)
class Spread:
    """A median and its min-max, over rounds (or patterns and rounds)."""

    median: float
    low: float
    high: float
    count: int

    @classmethod
    def of(cls, values: list[float]) -> Spread | None:
        return cls(statistics.median(values), min(values), max(values), len(values)) if values else None


def rounds(row: dict[str, Any]) -> list[dict[str, Any]]:
    """A combination's measured runs, each with its ``repeat`` (round) number."""
    runs = row.get("repeats") or [row]
    return [r for r in runs if not r.get("failed") and r.get("cpu_us_per_op") and _shares(r)
            and r.get("repeat") != "end"]


def _shares(run: dict[str, Any]) -> dict[str, float] | None:
    shares = run.get("shares") or {}
    return shares.get("instrumented") or shares.get("sampled")


def phase_us(run: dict[str, Any]) -> dict[str, float]:
    """A run's CPU per query in each phase, in µs."""
    shares = _shares(run) or {}
    return {k: shares.get(k, 0.0) * run["cpu_us_per_op"] for k in CATEGORIES}


def by_configuration(rows: list[dict[str, Any]], kind: str) -> dict[str, dict[str, dict[str, Any]]]:
    """configuration -> pattern -> row, for workload ``kind``."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        if row.get("workload") == kind and not row.get("failed"):
            out.setdefault(row["factory"], {})[row["pattern"]] = row
    return out


def shares(runs: list[dict[str, Any]]) -> dict[str, float]:
    """The phases' shares of the CPU per query of ``runs`` pooled (each run weighs its CPU per query)."""
    totals = dict.fromkeys(CATEGORIES, 0.0)
    for run in runs:
        for k, us in phase_us(run).items():
            totals[k] += us
    whole = sum(totals.values())
    return {k: v / whole for k, v in totals.items()} if whole else totals


def ratio(config: dict[str, dict[str, Any]], reference: dict[str, dict[str, Any]]) -> Spread | None:
    """CPU per query of ``config`` / ``reference``, per round, summed over the patterns both ran in
    that round: the median and spread over the rounds."""
    per_round: dict[Any, list[float]] = {}
    for pattern in config.keys() & reference.keys():
        ref = {r.get("repeat", 1): r for r in rounds(reference[pattern])}
        for run in rounds(config[pattern]):
            number = run.get("repeat", 1)
            if number in ref:
                sums = per_round.setdefault(number, [0.0, 0.0])
                sums[0] += run["cpu_us_per_op"]
                sums[1] += ref[number]["cpu_us_per_op"]
    return Spread.of([a / b for a, b in per_round.values() if b > 0])


@dataclass(frozen=True)
class Finding:
    phases: tuple[str, ...]
    remedy: str | None
    workloads: tuple[str, ...]
    share: float            # of the driver default's CPU per query, pooled over the patterns
    saving_us: Spread | None  # driver default - everything on, per pattern and round
    saving_share: float | None  # the median saving over the driver default's median CPU per query

    @property
    def text(self) -> str:
        name = " and ".join(PHASES[p] for p in self.phases)
        where = "/".join(WORKLOADS[k] for k in self.workloads)
        head = f"{name} ({where}): {self.share * 100:.0f}% of the driver default's CPU per query"
        if self.remedy is None:
            return f"{head}: no part of pyfactories acts on it"
        if self.saving_us is None:
            return f"{head} → {self.remedy} (saving not measured: no everything-on run)"
        s = self.saving_us
        if s.high <= 0:
            return f"{head} → {self.remedy}: no saving measured ({s.median:+.0f} µs/query)"
        return (f"{head} → {self.remedy}: saves {s.median:.0f} µs/query ({(self.saving_share or 0) * 100:.0f}% "
                f"of it; {s.low:.0f} to {s.high:.0f} over {s.count} pattern-rounds)")


def findings(rows: list[dict[str, Any]]) -> list[Finding]:
    """One finding per group of phases (:data:`FINDINGS`) worth :data:`MIN_SHARE` of the driver
    default's CPU in some workload, across its patterns and workloads, largest saving first."""
    out = []
    for phases, remedy in FINDINGS:
        kinds, share_of, savings, totals = [], [], [], []
        for kind in WORKLOADS:
            configs = by_configuration(rows, kind)
            driver = configs.get(DRIVER_DEFAULT, {})
            runs = [r for row in driver.values() for r in rounds(row)]
            if not runs:
                continue
            share = sum(shares(runs)[p] for p in phases)
            if share < MIN_SHARE:
                continue
            kinds.append(kind)
            share_of.append(share)
            totals += [r["cpu_us_per_op"] for r in runs]
            savings += _savings(driver, configs.get(ALL_ON, {}), phases)
        if kinds:
            spread = Spread.of(savings)
            out.append(Finding(phases, remedy, tuple(kinds), max(share_of), spread,
                               spread.median / statistics.median(totals) if spread else None))
    return sorted(out, key=lambda f: (f.remedy is None, -(f.saving_us.median if f.saving_us else 0), -f.share))


def _savings(driver: dict[str, dict[str, Any]], all_on: dict[str, dict[str, Any]],
             phases: tuple[str, ...]) -> list[float]:
    """Driver default - everything on, in ``phases``, µs per query: per pattern and round."""
    out = []
    for pattern in driver.keys() & all_on.keys():
        ours = {r.get("repeat", 1): r for r in rounds(all_on[pattern])}
        for run in rounds(driver[pattern]):
            other = ours.get(run.get("repeat", 1))
            if other is not None:
                mine, theirs = phase_us(run), phase_us(other)
                out.append(sum(mine[p] - theirs[p] for p in phases))
    return out


def waiting_note(rows: list[dict[str, Any]]) -> str:
    """Said once: how many runs used under half a core (they mostly wait: less CPU shortens little)."""
    runs = [r for row in rows for r in rounds(row) if r.get("wall_s")]
    waiting = [r for r in runs if (r.get("client_cpu_s") or 0) / r["wall_s"] < WAITING_CORES]
    if not waiting:
        return ""
    patterns = sorted({r["pattern"] for r in waiting})
    return (f"{len(waiting)} of {len(runs)} runs used under {WAITING_CORES} of a core ({', '.join(patterns)}): "
            "the client mostly waits on the node there, so less CPU per query shortens their latency little")


def _top(share: dict[str, float], limit: int = 6) -> str:
    parts = sorted(((v, k) for k, v in share.items() if v >= 0.005), reverse=True)[:limit]
    return " · ".join(f"{PHASES[k]} {v * 100:.0f}%" for v, k in parts)


def _fmt(s: Spread | None) -> str:
    if s is None:
        return "-"
    rounds_ = f" over {s.count} rounds" if s.count > 1 else ", 1 round: no spread"
    return f"{s.median:.2f}x ({s.low:.2f}–{s.high:.2f}{rounds_})"


def workload_lines(rows: list[dict[str, Any]], kind: str) -> list[str]:
    """The block of one workload: CPU per query per configuration and pattern, the ratios to the
    driver default, and where each configuration's CPU goes."""
    configs = by_configuration(rows, kind)
    shown = [c for c in CONFIGURATIONS if c in configs]
    if not shown:
        return []
    patterns = list(dict.fromkeys(p for c in shown for p in configs[c]))
    counts = {len(rounds(row)) for c in shown for row in configs[c].values()}
    label_w = max(len(CONFIGURATIONS[c]) for c in shown)
    widths = [max(len(p), 8) for p in patterns]
    n = "/".join(map(str, sorted(counts)))
    head = f"{WORKLOADS[kind]}: client CPU per query, median of {n} round{'s' if n != '1' else ''}"
    out = [head, "  " + " " * label_w + "  " + "  ".join(p.rjust(w) for p, w in zip(patterns, widths))
           + ("  vs driver default (min–max)" if len(shown) > 1 and DRIVER_DEFAULT in configs else "")]
    for c in shown:
        cells = [f"{configs[c][p]['cpu_us_per_op']:.0f} µs" if p in configs[c] else "-" for p in patterns]
        line = "  " + CONFIGURATIONS[c].ljust(label_w) + "  " + "  ".join(x.rjust(w) for x, w in zip(cells, widths))
        if c != DRIVER_DEFAULT and DRIVER_DEFAULT in configs:
            line += f"  {_fmt(ratio(configs[c], configs[DRIVER_DEFAULT]))}"
        out.append(line)
    for c in (DRIVER_DEFAULT, ALL_ON):
        if c in configs:
            runs = [r for row in configs[c].values() for r in rounds(row)]
            name = "driver default" if c == DRIVER_DEFAULT else "everything on"
            out.append(f"  where the CPU goes, {name}: {_top(shares(runs))}")
    all_on = ratio(configs.get(ALL_ON, {}), configs.get(DRIVER_DEFAULT, {}))
    if all_on:
        out.append(f"  everything on: {_fmt(all_on).replace('x (', 'x the driver default CPU per query (', 1)}")
    return out


def lines(rows: list[dict[str, Any]]) -> list[str]:
    """The whole answer: each workload's block, the findings, the waiting note (once)."""
    out: list[str] = []
    for kind in WORKLOADS:
        block = workload_lines(rows, kind)
        if block:
            out += [*block, ""]
    found = findings(rows)
    if found:
        out.append(f"findings: what pyfactories has for each phase; savings = driver default - everything on "
                   f"({CALL}), measured in this session:")
        out += [f"  - {f.text}" for f in found]
    note = waiting_note(rows)
    if note:
        out.append(f"  note: {note}")
    return out


def chart_data(rows: list[dict[str, Any]]) -> list[tuple[str, str, str, dict[str, float], float]]:
    """(workload, pattern, configuration, phase µs per query, CPU µs per query) for each bar of the
    page's chart: every configuration of :data:`CONFIGURATIONS` the session ran."""
    out = []
    for kind in WORKLOADS:
        configs = by_configuration(rows, kind)
        patterns = list(dict.fromkeys(p for c in CONFIGURATIONS if c in configs for p in configs[c]))
        for pattern in patterns:
            for c in CONFIGURATIONS:
                row = configs.get(c, {}).get(pattern)
                if row is not None and _shares(row):
                    out.append((kind, pattern, c, phase_us(row), row["cpu_us_per_op"]))
    return out
