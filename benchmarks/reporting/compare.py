"""What changed between two benchmark runs (``python -m benchmarks.compare``).

Reads files written by ``benchmarks.run`` or by one bench's ``--json`` (only
the depths present in both are compared), or two profiler summaries
(``python -m profiling run``'s ``summary.json``: client CPU per operation of
each workload x pattern x factory, and its ratio to ``tuple_factory`` in the
same pattern of the same run). Prints what differs in the
environment, every figure that moved by more than the threshold (in percent,
default 5), a geometric-mean summary per depth for pyfactories' own
factories, and any target whose verdict changed.

Which figures: factory-only and decode-only times per call (lower is better;
absolute times only compare on the same machine), decode-only ratios to
``tuple_factory``, and end-to-end ratios to ``tuple_factory`` of client CPU per
query (lower is better) and of throughput (higher is better); ratios taken
inside each run travel between machines better than absolute figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from profiling import factories as registry

from ..harness import depths
from . import targets
from .results_json import load_json
from .tables import markdown_table


@dataclass(frozen=True)
class Metric:
    depth: str
    case: str
    factory: str
    name: str
    lower_is_better: bool
    headline: bool = False  # summed up for pyfactories' own factories

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.depth, self.case, self.factory, self.name)


def metrics(results: dict[str, Any]) -> dict[tuple[str, str, str, str], tuple[Metric, float]]:
    """Every comparable figure of a results file, by (depth, case, factory, metric)."""
    out: dict[tuple[str, str, str, str], tuple[Metric, float]] = {}

    def put(m: Metric, v: Any) -> None:
        if isinstance(v, (int, float)) and v > 0 and math.isfinite(v):
            out[m.key] = (m, float(v))

    for depth, section in depths.sections(results):
        for fig in depth.bench.figures(section):
            put(Metric(depth.name, fig.case, fig.factory, fig.metric, fig.lower_is_better, fig.headline), fig.value)
    for fig in profile_figures(results.get(PROFILE, [])):
        put(Metric(PROFILE, fig.case, fig.factory, fig.metric, fig.lower_is_better, fig.headline), fig.value)
    return out


#: The key a profiler summary is read under (see :func:`load`).
PROFILE = "profile"


def load(path: str) -> dict[str, Any]:
    """A benchmark results file, or a profiler's ``summary.json`` (a list of runs) as ``{"profile": runs}``."""
    data: Any = load_json(path)
    return {PROFILE: data, "size": "profile"} if isinstance(data, list) else data


def profile_figures(runs: list[dict[str, Any]]) -> list[depths.Figure]:
    """Client CPU per operation of every run, and its ratio to the reference factory's run of the same
    workload and pattern (the profiler runs each combination once: no rounds to pair). Failed and
    interrupted runs, and runs in which nothing succeeded, are left out."""
    ok = [r for r in runs if not r.get("failed") and not r.get("interrupted") and r.get("cpu_us_per_op")
          and r.get("throughput_ops_s")]
    base = {(r["workload"], r["pattern"]): r for r in ok if r["factory"] == registry.REFERENCE}
    out = []
    for r in ok:
        case, ref = f"{r['workload']} {r['pattern']}", base.get((r["workload"], r["pattern"]))
        out.append(depths.Figure(case, r["factory"], "CPU µs/op", r["cpu_us_per_op"]))
        if ref is not None and r is not ref:
            out.append(depths.Figure(case, r["factory"], "CPU ratio to tuple",
                                     r["cpu_us_per_op"] / ref["cpu_us_per_op"], headline=True))
            out.append(depths.Figure(case, r["factory"], "ops/s ratio to tuple",
                                     r["throughput_ops_s"] / ref["throughput_ops_s"], lower_is_better=False))
    return out


def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


ENV_KEYS = ("machine.cpu", "machine.cpus_usable", "python.version", "python.implementation", "driver.distribution",
            "driver.version",
            "driver.cython", "driver.connection_class", "pyfactories.version", "pyfactories.impl",
            "pyfactories.decoding", "cassandra.version", "cassandra.nodes", "cassandra.protocol_version",
            "git.commit")


def env_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    a, b = _flat(old.get("env", {})), _flat(new.get("env", {}))
    lines = []
    for k in ENV_KEYS:
        if a.get(k) != b.get(k) and (k in a or k in b):
            lines.append(f"  {k}: {a.get(k, '-')} -> {b.get(k, '-')}")
    if _size(old) != _size(new):
        lines.append(f"  size: {_size(old)} -> {_size(new)}")
    return lines


def _verdicts(results: dict[str, Any]) -> dict[tuple[str, str, str], targets.Verdict]:
    raw = results.get("verdicts")
    if raw is None:  # a single bench's file: the verdicts sit in its section
        raw = [v for _, section in depths.sections(results) for v in section.get("verdicts", [])]
    vs = [targets.Verdict(**v) for v in raw]
    return {(v.depth, v.case, v.what): v for v in vs if v.status in ("PASS", "MISS")}


def compare(old: dict[str, Any], new: dict[str, Any], threshold: float = 5.0, show_all: bool = False) -> str:
    """The text report of what changed from ``old`` to ``new``."""
    a, b = metrics(old), metrics(new)
    lines = [f"old: {old.get('env', {}).get('created', '?')} ({_size(old)})",
             f"new: {new.get('env', {}).get('created', '?')} ({_size(new)})"]
    env = env_changes(old, new)
    if env:
        lines += ["environment changed:"] + env
    common_keys = [k for k in a if k in b]
    if not common_keys:
        lines.append("no figures in common")
        return "\n".join(lines)
    rows = []
    by_depth: dict[str, list[float]] = {}
    better = worse = 0
    for k in common_keys:
        m, va = a[k]
        vb = b[k][1]
        change = vb / va
        improved = change < 1 if m.lower_is_better else change > 1
        if m.headline and registry.is_ours(m.factory):
            by_depth.setdefault(m.depth, []).append(change)
        moved = abs(change - 1) * 100 >= threshold
        if moved:
            better += improved
            worse += not improved
        if moved or show_all:
            tag = ("better" if improved else "WORSE") if moved else ""
            rows.append([m.depth, m.case, m.factory, m.name, f"{va:.4g}", f"{vb:.4g}",
                         f"{(change - 1) * 100:+.1f}%", tag])
    lines.append("")
    if rows:
        lines.append(f"figures that moved by {threshold:g}% or more ({better} better, {worse} worse, "
                     f"of {len(common_keys)} compared):" if not show_all else f"all {len(common_keys)} figures:")
        lines.append(markdown_table(["depth", "case", "factory", "metric", "old", "new", "change", ""], rows,
                                    ["l", "l", "l", "l", "r", "r", "r", "l"]))
    else:
        lines.append(f"nothing moved by {threshold:g}% or more ({len(common_keys)} figures compared)")
    if by_depth:
        lines += ["", "pyfactories' factories, geometric mean of new/old (time per call; CPU ratio end to end):"]
        for depth, changes in by_depth.items():
            g = math.exp(sum(math.log(c) for c in changes) / len(changes))
            word = "about the same" if abs(g - 1) < 0.005 else ("faster" if g < 1 else "slower")
            lines.append(f"  {depth:<8} {g:.3f}x over {len(changes)} figures ({word})")
    old_v, new_v = _verdicts(old), _verdicts(new)
    flips = [(k, old_v[k], new_v[k]) for k in old_v if k in new_v and old_v[k].status != new_v[k].status]
    if flips:
        lines += ["", "targets whose verdict changed:"]
        for _, o, n in flips:
            lines.append(f"  {o.status} -> {n.status}  {n.depth} {n.case}: {n.what} "
                         f"({_fmt(o.value)} -> {_fmt(n.value)}, target {n.target})")
    missing = sorted({k[:3] for k in a} ^ {k[:3] for k in b})
    if missing:
        lines += ["", f"{len(missing)} case/factory pair(s) in only one of the files, e.g. "
                  + ", ".join("/".join(m) for m in missing[:5])]
    return "\n".join(lines)


def _size(results: dict[str, Any]) -> str:
    if results.get("size"):
        return str(results["size"])
    for depth, section in depths.sections(results):
        size = (section.get("config") or {}).get("size")
        if size:
            return f"{size}, {depth.key} only"
    return "?"


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}x"
