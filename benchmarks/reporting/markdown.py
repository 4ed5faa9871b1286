"""The markdown report of a benchmark run (what ``benchmarks.run`` writes as ``results.md``, and
``python -m benchmarks.report`` prints)."""

from __future__ import annotations

from typing import Any

from ..harness import depths
from . import targets


def environment_lines(env: dict[str, Any]) -> list[str]:
    m, py, drv, pf = env.get("machine", {}), env.get("python", {}), env.get("driver", {}), env.get("pyfactories", {})
    cas = env.get("cassandra") or {}
    git = env.get("git") or {}
    lines = [
        f"- date: {env.get('created', '?')}",
        f"- machine: {m.get('cpu', '?')}, {m.get('cpus_usable', '?')} usable CPU(s) of {m.get('cpus', '?')}, "
        f"{m.get('mem_total_mb', '?')} MB, {m.get('platform', '?')}; load average at start "
        f"{', '.join(f'{x:.2f}' for x in (m.get('loadavg_at_start') or []))}",
        f"- Python {py.get('version', '?')} ({py.get('implementation', '?')}), {drv.get('distribution', 'cassandra-driver')} {drv.get('version', '?')} "
        f"({'compiled' if drv.get('cython') else 'pure Python'}, {drv.get('connection_class', '?')}), "
        f"pyfactories {pf.get('version', '?')} ({pf.get('impl', '?')}; fast path: "
        f"{', '.join(pf.get('fastpath') or []) or 'not available'})",
    ]
    if cas:
        lines.append(f"- Cassandra {cas.get('version', '?')}, {cas.get('nodes', '?')} node(s) at "
                     f"{', '.join(cas.get('hosts', []))}, protocol v{cas.get('protocol_version', '?')}")
    if git:
        lines.append(f"- commit {git.get('commit', '?')[:12]}{' (with uncommitted changes)' if git.get('dirty') else ''}")
    return lines


def render(results: dict[str, Any]) -> str:
    """The whole report: environment, each depth that ran, then every target's verdict."""
    env = results.get("env", {})
    size = results.get("size", "?")
    parts = [
        f"## Benchmarks ({size} size)",
        "",
        f"Command: `{results.get('command', 'python -m benchmarks.run')}`"
        + (f", {results['duration_s']:.0f} s" if results.get("duration_s") else ""),
        "",
        *environment_lines(env),
        "",
    ]
    for depth, section in depths.sections(results):
        parts += [depth.bench.render(section), ""]
    verdicts = [targets.Verdict(**v) for v in results.get("verdicts", [])] or targets.all_verdicts(results)
    if verdicts:
        parts += [*targets.fenced("### All targets", verdicts), ""]
    return "\n".join(parts)
