"""The PNG chart of a benchmark run: every depth's panels, as ratios to a plain-tuple reference
(``python -m benchmarks.chart``, and ``benchmarks.run``'s ``chart.png``).

Each depth (``benchmarks.harness.depths``) draws its own panels, two to a row. Decode-only
and end-to-end (CPU per query, throughput) are ratios to ``tuple_factory``
measured in the same run. Factory-only is the exception: there
``tuple_factory`` only returns its input (it costs one call, whatever the rows),
so the reference is the cost of copying the rows into new plain tuples, the
baseline of the factory-only targets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from profiling import factories as registry

from ..harness import depths


@dataclass(frozen=True)
class Panel:
    """One chart panel of a depth: ``draw(ax, section)`` when the depth has cases, else ``title``
    and why not (``not run``, or the section's ``skipped``)."""
    title: str
    draw: Callable[[Any, dict[str, Any]], None]


def bars(ax: Any, cases: list[dict[str, Any]], key: str, title: str, ylabel: str,
         marks: dict[tuple[str, str], float] | None = None) -> None:
    """Grouped bars of ``results[factory][key]`` per case, in reading order (no pure-Python twins);
    ``marks`` draws a black tick at a limit over the bar of ``(case, factory)``."""
    present = registry.registered_among({n for c in cases for n in c["results"]}, "driver", *registry.OURS)
    width = 0.8 / max(1, len(present))
    for i, name in enumerate(present):
        xs, ys = [], []
        for j, c in enumerate(cases):
            v = c["results"].get(name, {}).get(key)
            if v is not None:
                xs.append(j - 0.4 + width * (i + 0.5))
                ys.append(v)
        ax.bar(xs, ys, width, label=name, color=registry.color(name))
    for (case_id, name), limit in (marks or {}).items():
        if name in present:
            ids = [c["id"] for c in cases]
            if case_id in ids:
                x = ids.index(case_id) - 0.4 + width * (present.index(name) + 0.5)
                ax.plot([x - width / 2, x + width / 2], [limit, limit], color="black", lw=1.5)
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([f"{c['id']}\n{c['rows']}x{c['cols']}" for c in cases], fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.set_ylabel(ylabel, fontsize=9)
    ax.grid(axis="y", alpha=0.3)


def empty(ax: Any, title: str, why: str) -> None:
    ax.set_title(title, fontsize=10)
    ax.text(0.5, 0.5, why, ha="center", va="center", transform=ax.transAxes, fontsize=9, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def draw(results: dict[str, Any], path: str | Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(panel, results.get(depth.key)) for depth in depths.DEPTHS for panel in depth.bench.PANELS]
    rows = math.ceil(len(panels) / 2)
    fig, grid = plt.subplots(rows, 2, figsize=(14, 4.75 * rows), squeeze=False)
    axes = [ax for row in grid for ax in row]
    for ax, (panel, section) in zip(axes, panels):
        if section and section.get("cases"):
            panel.draw(ax, section)
        else:
            empty(ax, panel.title, (section or {}).get("skipped", "not run"))
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    # one legend for the panels without their own, under them
    handles: dict[str, Any] = {}
    for ax in axes:
        if ax.get_legend() is None:
            for h, label in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(label, h)
    if handles:
        fig.legend(list(handles.values()), list(handles.keys()), loc="lower center", ncol=len(handles), fontsize=8,
                   frameon=False)
    env = results.get("env", {})
    cas = (env.get("cassandra") or {}).get("version")
    drv = env.get("driver", {})
    fig.suptitle(
        f"pyfactories benchmarks ({results.get('size', '?')}), {env.get('created', '')[:10]}: Python "
        f"{env.get('python', {}).get('version', '?')}, {drv.get('distribution', 'cassandra-driver')} "
        f"{drv.get('version', '?')}"
        + (f", Cassandra {cas}" if cas else "") + f", {env.get('machine', {}).get('cpus_usable', '?')} CPU(s)",
        fontsize=11,
    )
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
