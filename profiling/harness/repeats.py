"""Repeated runs of one combination (``run --repeat N``), summed up in one row.

The harness runs the repeats round-robin (every combination once, then every combination again,
...), so a slow drift of a shared machine lands on every combination alike. A combination's row then
holds the medians of CPU per operation and of throughput, their spread (min-max), the shares and
artifacts of its median run (the repeat whose CPU per operation is the median; the lower middle one
for an even count), every repeat's own row under ``repeats``, and ``noisy`` when CPU per operation
differs by more than :data:`NOISY_SPREAD` between repeats (largest / smallest - 1).

A repeat that failed or was interrupted (stopped early: partial figures) stays out of the medians, the
spread and the noisy mark whenever a complete repeat exists; the row still says what happened to it:
``interrupted`` and the first ``interrupted_reason``, and ``failed_repeats`` (their numbers), so a
session's exit code and the reports' marks see it whichever run is the median.
"""

from __future__ import annotations

import statistics
from typing import Any, Iterable

NOISY_SPREAD = 0.10
NOISY_MARK = "!"
SPREAD_KEYS = ("cpu_us_per_op", "throughput_ops_s")


def key(row: dict[str, Any]) -> tuple[str, str, str]:
    return (row["workload"], row["pattern"], row["factory"])


def plan(combos: list[tuple[str, str, str]], repeats: int) -> list[tuple[int, tuple[str, str, str]]]:
    """(repeat number from 1, combination) in the order they run: round-robin over the combinations."""
    if repeats < 1:
        raise ValueError(f"--repeat must be at least 1, not {repeats}")
    return [(r, combo) for r in range(1, repeats + 1) for combo in combos]


#: The ``repeat`` of the warm-up check: the first combination once more, after all the others.
CHECK = "end"


def combine(runs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per combination, in the order each combination first ran (see :func:`summarize`); a
    warm-up check run (``repeat`` :data:`CHECK`) is not a repeat: it goes under its row's ``warmup_check``."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    checks: dict[tuple[str, str, str], dict[str, Any]] = {}
    for run in runs:
        if run.get("repeat") == CHECK:
            checks[key(run)] = run
        else:
            groups.setdefault(key(run), []).append(run)
    rows = [summarize(g) for g in groups.values()]
    for row in rows:
        if key(row) in checks:
            row["warmup_check"] = check(row, checks[key(row)])
    return rows


def check(row: dict[str, Any], end: dict[str, Any]) -> dict[str, Any]:
    """The first run of a combination against the same combination run again after all the others:
    on a node and client that were warm from the start, the two agree."""
    first = (row.get("repeats") or [row])[0]
    out: dict[str, Any] = {"first_cpu_us_per_op": first.get("cpu_us_per_op"),
                           "end_cpu_us_per_op": end.get("cpu_us_per_op"),
                           "first_throughput_ops_s": first.get("throughput_ops_s"),
                           "end_throughput_ops_s": end.get("throughput_ops_s"), "change": None}
    if _measured(first) and _measured(end) and end["cpu_us_per_op"]:
        out["change"] = first["cpu_us_per_op"] / end["cpu_us_per_op"] - 1
    return out


def check_line(rows: list[dict[str, Any]]) -> str:
    """The warm-up check in words, or nothing when none ran."""
    for row in rows:
        c = row.get("warmup_check")
        if c and c["change"] is not None:
            return (f"warm-up check: {' '.join(key(row))} read {c['first_cpu_us_per_op']:.0f} µs CPU/op "
                    f"({c['first_throughput_ops_s']:.0f} ops/s) when it ran first and "
                    f"{c['end_cpu_us_per_op']:.0f} µs ({c['end_throughput_ops_s']:.0f} ops/s) run again after "
                    f"all the others: first/last {c['change']:+.1%}")
    return ""


def first_round_line(rows: list[dict[str, Any]]) -> str:
    """The warm-up check of interleaved rounds: the session's very first run (round 1 of the first
    combination) against the later rounds of the same combination; nothing without later rounds."""
    if not rows or not rows[0].get("repeats"):
        return ""
    runs = [r for r in rows[0]["repeats"] if _measured(r) and r.get("repeat") != CHECK]
    first = next((r for r in runs if r.get("repeat") == 1), None)
    later = [r["cpu_us_per_op"] for r in runs if r.get("repeat") != 1]
    if first is None or not later:
        return ""
    cpu, low, high = first["cpu_us_per_op"], min(later), max(later)
    if low <= cpu <= high:
        verdict = "within their range: no warm-up artefact"
    elif high * (1 + NOISY_SPREAD) >= cpu >= low / (1 + NOISY_SPREAD):
        verdict = f"{cpu / (high if cpu > high else low) - 1:+.0%} off their range, inside the {NOISY_SPREAD:.0%} noise mark"
    else:
        verdict = (f"{cpu / high - 1:+.0%} above them: the first run paid for a warm-up" if cpu > high
                   else f"{cpu / low - 1:+.0%} below them")
    return (f"warm-up check: {' '.join(key(rows[0]))}, the session's first run, {cpu:.0f} µs CPU/query; "
            f"its later rounds {low:.0f}–{high:.0f}: {verdict}")


def _measured(run: dict[str, Any]) -> bool:
    return not run.get("failed") and run.get("cpu_us_per_op") is not None


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The row of one combination from its repeats' rows (a single run's row keeps its shape, plus
    ``noisy``)."""
    if len(runs) == 1:
        return {**runs[0], "noisy": False}
    measured = [r for r in runs if _measured(r)]
    ok = [r for r in measured if not r.get("interrupted")] or measured  # partial figures only if all are
    if not ok:
        return {**runs[0], "noisy": False, "repeats": runs}
    middle = sorted(ok, key=lambda r: r["cpu_us_per_op"])[(len(ok) - 1) // 2]
    row = {k: v for k, v in middle.items() if k not in ("repeat", "interrupted_reason")}
    row["median_repeat"] = middle.get("repeat")
    for k in SPREAD_KEYS:
        values = [r[k] for r in ok]
        row[k] = statistics.median(values)
        row.setdefault("spread", {})[k] = [min(values), max(values)]
    low, high = row["spread"]["cpu_us_per_op"]
    row["noisy"] = len(ok) > 1 and low > 0 and high > low * (1 + NOISY_SPREAD)
    row["interrupted"] = any(r.get("interrupted") for r in runs)
    reason = next((r["interrupted_reason"] for r in runs if r.get("interrupted_reason")), None)
    if reason:
        row["interrupted_reason"] = reason
    row["failed_repeats"] = [r.get("repeat") for r in runs if r.get("failed")]
    row["warnings"] = _warnings(runs)
    artifacts = dict(middle.get("artifacts", {}))
    profiled = next((r for r in runs if "prof" in r.get("artifacts", {})), None)
    if profiled is not None:
        artifacts["prof"] = profiled["artifacts"]["prof"]
        row["cprofile_ops"] = profiled.get("cprofile_ops")
    row["artifacts"] = artifacts
    row["artifacts_from"] = {"samples": middle.get("repeat"),
                             "cprofile": profiled.get("repeat") if profiled else None}
    row["repeats"] = runs
    return row


def _warnings(runs: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for run in runs:
        if run.get("failed"):
            out.append(f"repeat {run.get('repeat')} failed: {run['failed']}")
        for w in run.get("warnings", []):
            if w not in out:
                out.append(w)
    return out


def figure(row: dict[str, Any], name: str) -> str:
    """A table cell: the figure (a median when repeated), its min-max range after it, and the
    noisy mark after CPU per operation."""
    value = row.get(name)
    if value is None:
        return "-"
    text = f"{value:.0f}"
    spread = (row.get("spread") or {}).get(name)
    if spread:
        text += f" ({spread[0]:.0f}–{spread[1]:.0f})"
    if name == "cpu_us_per_op" and row.get("noisy"):
        text += NOISY_MARK
    return text


def legend(rows: list[dict[str, Any]]) -> str:
    """What the repeated cells mean, or nothing when no row was repeated."""
    counts = sorted({len(r["repeats"]) for r in rows if r.get("repeats")})
    if not counts:
        return ""
    n = "/".join(map(str, counts))
    return (f"; ops/s and CPU µs/op: median of {n} repeats (min–max), the complete ones when there are any; shares, ops and files from the median "
            f"run; {NOISY_MARK} = CPU µs/op differs by more than {NOISY_SPREAD:.0%} between repeats")


def markdown(rows: list[dict[str, Any]]) -> str:
    """The per-repeat figures, in the order the repeats ran, and the warm-up check (empty when
    nothing was repeated or checked)."""
    repeated = [r for r in rows if r.get("repeats")]
    checked = check_line(rows)
    if not repeated:
        return f"\n{checked}.\n" if checked else ""
    most = max(len(r["repeats"]) for r in repeated)
    head = ["workload", "pattern", "factory", *(f"repeat {k}" for k in range(1, most + 1)), "median run"]
    out = ["\nCPU µs/op (ops/s) of every repeat, in the order they ran (round-robin over the rows):\n",
           "| " + " | ".join(head) + " |", "|---|---|---|" + "--:|" * (most + 1)]
    for r in repeated:
        cells = [_repeat_cell(run) for run in r["repeats"]] + [""] * (most - len(r["repeats"]))
        out.append("| " + " | ".join([*key(r), *cells, str(r.get("median_repeat") or "-")]) + " |")
    return "\n".join(out) + "\n" + (f"\n{checked}.\n" if checked else "")


def _repeat_cell(run: dict[str, Any]) -> str:
    if not _measured(run):
        return "FAILED"
    return f"{run['cpu_us_per_op']:.0f} ({run['throughput_ops_s']:.0f})" + ("*" if run.get("interrupted") else "")
