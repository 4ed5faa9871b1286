"""The benchmarks' targets, checked against a run's results.

Targets are benchmarks, not timed tests: a miss is printed plainly (``MISS``)
and recorded in the JSON, it does not fail the run.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import Any, Iterable

#: The factory-only mixed table: 10 columns of mixed values, at these row counts.
MIXED_COLS = 10
MIXED_KIND = "mixed"
MIXED_ROWS = (1, 10, 100, 200, 1000, 5000)
#: The page size dataclass rows are judged at.
TYPED_ROWS = 200

#: End to end: client CPU per query relative to tuple_factory on this machine's reference run.
E2E_TARGETS = (
    # (workload, factory, limit)
    ("single", "cached_named_tuple", 1.02),
    ("pages", "cached_named_tuple", 1.05),
    ("pages", "pf_dict", 1.08),
    ("single", "fastpath_named", 0.85),
    ("pages", "fastpath_named", 0.85),
    ("single", "fastpath_dict", 0.90),
    ("pages", "fastpath_dict", 0.90),
    ("pages", "fastpath_class", 0.80),
    # our connection (connection.cluster_options()) with the fast path, against the driver's tuple path
    ("insert1000", "fastpath_named+conn", 0.45),
    ("single50", "fastpath_named+conn", 0.60),
)
#: The same measure, the targets of our connection with the compiled request path on it (bind,
#: encoding): judged as above, named apart in the verdicts.
E2E_REQUEST_PATH_TARGETS = (
    ("single50", "fastpath_named+conn", 0.50),
    ("single50", "fastpath_dict+conn", 0.55),
    ("single", "fastpath_named+conn", 0.70),
    ("insert50", "fastpath_named+conn", 0.60),
    ("insert1000", "fastpath_named+conn", 0.40),
)
REQUEST_PATH = " (request path)"
#: End to end, one configuration against another of the same run: client CPU per query, the median
#: of per-round ratios (workload, configuration, the one it is measured against, limit).
E2E_PAIRED_TARGETS = (
    # our connection no worse than the fast path on the driver's connection
    ("pages", "fastpath_named+conn", "fastpath_named", 1.00),
)
#: The driver's own figures from the same reference (informative: "REF", not pass/fail).
E2E_REFERENCE = (
    ("single", "named_tuple", 1.46),
    ("pages", "named_tuple", 1.50),
    ("single", "dict", 1.00),
    ("pages", "dict", 1.19),
)

#: The "Avoid namedtuple" write-up: run time of its select workload per row factory, in seconds
#: (Python 2.7, the driver of the time, wall clock). Quoted for comparison with the ``single`` workload.
AVOID_NAMEDTUPLE_RUNTIME_S = {"tuple": 0.884321, "named_tuple": 1.480597, "dict": 0.876114, "ordered_dict": 0.945361}


@dataclass
class Verdict:
    depth: str
    case: str
    what: str           # e.g. "named_tuple / cached_named_tuple"
    target: str         # e.g. ">= 100x"
    value: float | None
    status: str         # PASS, MISS, REF (reference figure, no pass/fail), N/A (not measured), or ~PASS/~MISS
                        # (indicative: end to end outside the reference configuration, ``benchmarks.e2e.reference``)
    note: str = ""

    def line(self) -> str:
        val = "-" if self.value is None else (f"{self.value:.3f}x" if self.value < 10 else f"{self.value:.0f}x")
        extra = f"  ({self.note})" if self.note else ""
        return f"{self.status:<4} {self.depth} {self.case}: {self.what} = {val}, target {self.target}{extra}"


def _check(value: float | None, op: str, limit: float) -> str:
    if value is None:
        return "N/A"
    ok = value >= limit if op == ">=" else value <= limit
    return "PASS" if ok else "MISS"


def factory_only(section: dict[str, Any]) -> list[Verdict]:
    """The factory-only speed targets (the mixed table's shape), from a factory-only section."""
    out: list[Verdict] = []
    by_rows = {
        c["rows"]: c["results"] for c in section.get("cases", [])
        if c["cols"] == MIXED_COLS and c["kind"] == MIXED_KIND
    }

    def med(res: dict[str, Any], name: str) -> float | None:
        r = res.get(name)
        return r["ns_per_call"] if r else None

    def speedup(res: dict[str, Any], slow: str, fast: str) -> float | None:
        a, b = med(res, slow), med(res, fast)
        return a / b if a and b else None

    case = lambda rows: f"{rows}x{MIXED_COLS} {MIXED_KIND}"  # noqa: E731
    for rows, limit in ((1, 100.0), (1000, 4.0)):
        res = by_rows.get(rows, {})
        v = speedup(res, "named_tuple", "cached_named_tuple")
        out.append(Verdict("factory", case(rows), "named_tuple / cached_named_tuple", f">= {limit:g}x",
                           v, _check(v, ">=", limit)))
    for rows in MIXED_ROWS:
        res = by_rows.get(rows, {})
        v = speedup(res, "cached_named_tuple", "copy_tuples")  # cost relative to copying
        out.append(Verdict("factory", case(rows), "cached_named_tuple / copy_tuples", "<= 1.3x",
                           v, _check(v, "<=", 1.3)))
    for rows in MIXED_ROWS:
        res = by_rows.get(rows, {})
        v = speedup(res, "cached_named_tuple_kept", "copy_tuples_kept")
        if v is not None:
            out.append(Verdict("factory", case(rows), "cached_named_tuple / copy_tuples, results kept", "<= 1.3x",
                               v, _check(v, "<=", 1.3), "no tuple free-list reuse"))
    for rows in (100, 1000, 5000):
        res = by_rows.get(rows, {})
        v = speedup(res, "dict", "pf_dict")
        out.append(Verdict("factory", case(rows), "dict / pf_dict", ">= 2.5x", v, _check(v, ">=", 2.5)))
    # dataclass rows of a plain slotted dataclass: against the hand-written conversion and our named rows
    res = by_rows.get(TYPED_ROWS, {})
    v = speedup(res, "dataclass_handwritten", "class_row")
    out.append(Verdict("factory", case(TYPED_ROWS), "dataclass_handwritten / class_row", ">= 5x", v,
                       _check(v, ">=", 5.0)))
    v = speedup(res, "class_row", "cached_named_tuple")
    out.append(Verdict("factory", case(TYPED_ROWS), "class_row / cached_named_tuple", "<= 3x", v,
                       _check(v, "<=", 3.0)))
    return out


def end_to_end(section: dict[str, Any]) -> list[Verdict]:
    """The end-to-end targets (client CPU per query / tuple_factory's), plus the driver's reference figures;
    judged (PASS/MISS) only when measured in the reference configuration, indicative (~PASS/~MISS) otherwise."""
    from ..e2e.reference import judged

    out: list[Verdict] = []
    cases = {c["id"]: c for c in section.get("cases", [])}
    listed = [(t, "") for t in E2E_TARGETS] + [(t, REQUEST_PATH) for t in E2E_REQUEST_PATH_TARGETS]
    for (workload, factory, limit), label in listed:
        r = cases.get(workload, {}).get("results", {}).get(factory)
        v = r.get("cpu_ratio") if r else None
        status, note = judged(_check(v, "<=", limit), section.get("config", {}))
        spread = r.get("cpu_ratio_range") if r else None
        rounds = f"rounds {spread[0]:.2f}-{spread[1]:.2f}" if spread else ""
        out.append(Verdict("e2e", workload, f"CPU/query {factory} / tuple{label}", f"<= {limit:.2f}x", v, status,
                           "; ".join(x for x in (rounds, note) if x)))
    for workload, factory, against, limit in E2E_PAIRED_TARGETS:
        res = cases.get(workload, {}).get("results", {})
        a, b = res.get(factory), res.get(against)
        per_round = [x / y for x, y in zip(a["cpu_us_rounds"], b["cpu_us_rounds"]) if y] if a and b else []
        v = statistics.median(per_round) if per_round else None
        status, note = judged(_check(v, "<=", limit), section.get("config", {}))
        rounds = f"rounds {min(per_round):.2f}-{max(per_round):.2f}" if per_round else ""
        out.append(Verdict("e2e", workload, f"CPU/query {factory} / {against}", f"<= {limit:.2f}x", v, status,
                           "; ".join(x for x in (rounds, note) if x)))
    for workload, factory, ref in E2E_REFERENCE:
        r = cases.get(workload, {}).get("results", {}).get(factory)
        v = r.get("cpu_ratio") if r else None
        out.append(Verdict("e2e", workload, f"CPU/query {factory} / tuple", f"reference ~{ref:.2f}x", v,
                           "REF" if v is not None else "N/A", "the driver's own figure, not a target"))
    return out


def all_verdicts(results: dict[str, Any]) -> list[Verdict]:
    """Every depth's verdicts (``depths.DEPTHS``), for the depths the results hold."""
    from ..harness.depths import sections

    return [v for depth, section in sections(results) for v in depth.bench.verdicts(section)]


def as_json(verdicts: Iterable[Verdict]) -> list[dict[str, Any]]:
    return [asdict(v) for v in verdicts]


def fenced(title: str, verdicts: Iterable[Verdict | dict]) -> list[str]:
    """Markdown lines: ``title``, then the :func:`summary` of ``verdicts`` in a code block."""
    vs = [v if isinstance(v, Verdict) else Verdict(**v) for v in verdicts]
    return [title, "", "```", summary(vs), "```"]


def summary(verdicts: Iterable[Verdict]) -> str:
    vs = list(verdicts)
    lines = [v.line() for v in vs]
    misses = [v for v in vs if v.status == "MISS"]
    if misses:
        lines.append(f"{len(misses)} target(s) MISSED: " + "; ".join(f"{v.case}: {v.what}" for v in misses))
    elif any(v.status == "PASS" for v in vs):
        lines.append("all judged targets met")
    indicative = [v for v in vs if v.status.startswith("~")]
    if indicative:
        would = sum(v.status == "~MISS" for v in indicative)
        lines.append(f"{len(indicative)} end-to-end verdict(s) only indicative (~; {would} would miss): not measured "
                     "in the reference configuration (client and server pinned apart, at least 21 rounds: make bench)")
    return "\n".join(lines)
