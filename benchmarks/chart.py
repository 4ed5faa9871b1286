"""The PNG chart of a benchmark run: every depth as ratios to a plain-tuple reference.

    python -m benchmarks.chart bench-results/<stamp>/results.json [-o chart.png]

Four panels. Decode-only and end-to-end (CPU per query, throughput) are
ratios to ``tuple_factory`` measured in the same run. Factory-only is the
exception: there ``tuple_factory`` only returns its input (it costs one call,
whatever the rows), so the reference is the cost of copying the rows into new
plain tuples, the baseline issue 2 names.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence

from . import common, targets

COLORS = {
    "tuple": "#7f7f7f", "named_tuple": "#d62728", "dict": "#ff7f0e", "ordered_dict": "#e377c2",
    "cached_named_tuple": "#1f77b4", "pf_dict": "#2ca02c", "pf_ordered_dict": "#17becf",
    "fastpath_named": "#9467bd", "fastpath_dict": "#8c564b",
    "py_cached_named_tuple": "#aec7e8", "py_dict": "#98df8a", "py_ordered_dict": "#9edae5",
}
BAR_ORDER = ("tuple", "named_tuple", "cached_named_tuple", "fastpath_named", "dict", "pf_dict", "fastpath_dict",
             "ordered_dict", "pf_ordered_dict")


def _bars(ax: Any, cases: list[dict[str, Any]], key: str, title: str, ylabel: str,
          marks: dict[tuple[str, str], float] | None = None) -> None:
    present = [n for n in BAR_ORDER if any(n in c["results"] for c in cases)]
    width = 0.8 / max(1, len(present))
    for i, name in enumerate(present):
        xs, ys = [], []
        for j, c in enumerate(cases):
            v = c["results"].get(name, {}).get(key)
            if v is not None:
                xs.append(j - 0.4 + width * (i + 0.5))
                ys.append(v)
        ax.bar(xs, ys, width, label=name, color=COLORS.get(name))
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


def _empty(ax: Any, title: str, why: str) -> None:
    ax.set_title(title, fontsize=10)
    ax.text(0.5, 0.5, why, ha="center", va="center", transform=ax.transAxes, fontsize=9, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def _factory_panel(ax: Any, section: dict[str, Any] | None) -> None:
    title = (f"Factory only: {targets.ISSUE2_COLS} {targets.ISSUE2_KIND} columns,\n"
             "cost relative to copying into new plain tuples")
    if not section:
        _empty(ax, title, "not run")
        return
    cases = sorted((c for c in section["cases"] if c["cols"] == targets.ISSUE2_COLS and c["kind"] == targets.ISSUE2_KIND),
                   key=lambda c: c["rows"])
    if not cases:
        cols = sorted({c["cols"] for c in section["cases"]})
        kinds = sorted({c["kind"] for c in section["cases"]})
        cases = sorted((c for c in section["cases"] if c["cols"] == cols[0] and c["kind"] == kinds[0]),
                       key=lambda c: c["rows"])
        title = f"Factory only: {cols[0]} {kinds[0]} columns,\ncost relative to copying into new plain tuples"
    for name in ("named_tuple", "cached_named_tuple", "dict", "pf_dict", "ordered_dict", "pf_ordered_dict"):
        xs, ys = [], []
        for c in cases:
            r = common.ratio(c["results"].get(name, {}).get("ns_per_call"),
                             c["results"].get("copy_tuples", {}).get("ns_per_call"))
            if r is not None:
                xs.append(c["rows"])
                ys.append(r)
        if xs:
            ax.plot(xs, ys, marker="o", label=name, color=COLORS[name],
                    ls="-" if name in common.OURS else "--")
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    ax.axhline(1.3, color="grey", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rows per call", fontsize=9)
    ax.set_ylabel("time / time of copy_tuples", fontsize=9)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)


def draw(results: dict[str, Any], path: str | Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(14, 9.5))
    _factory_panel(axes[0][0], results.get("factory_only"))
    dec = results.get("decode")
    if dec and dec.get("cases"):
        _bars(axes[0][1], dec["cases"], "ratio_to_tuple",
              "Decode only: driver decode_message + row factory,\nrelative to decode + tuple_factory",
              "time / time with tuple_factory")
    else:
        _empty(axes[0][1], "Decode only", "not run")
    e2e = results.get("e2e")
    if e2e and e2e.get("cases"):
        marks = {(w, f): limit for w, f, limit in targets.E2E_TARGETS}
        _bars(axes[1][0], e2e["cases"], "cpu_ratio",
              "End to end: client CPU per query relative to tuple_factory\n(black ticks: issue 5 targets)",
              "CPU per query / tuple's", marks)
        _bars(axes[1][1], e2e["cases"], "qps_ratio", "End to end: throughput relative to tuple_factory",
              "queries per second / tuple's")
    else:
        why = (e2e or {}).get("skipped", "not run")
        _empty(axes[1][0], "End to end: client CPU per query", why)
        _empty(axes[1][1], "End to end: throughput", why)
    # one legend for the bar panels, under them
    handles: dict[str, Any] = {}
    for ax in (axes[0][1], axes[1][0], axes[1][1]):
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, h)
    if handles:
        fig.legend(list(handles.values()), list(handles.keys()), loc="lower center", ncol=len(handles), fontsize=8,
                   frameon=False)
    env = results.get("env", {})
    cas = (env.get("cassandra") or {}).get("version")
    fig.suptitle(
        f"pyfactories benchmarks ({results.get('size', '?')}), {env.get('created', '')[:10]}: Python "
        f"{env.get('python', {}).get('version', '?')}, cassandra-driver {env.get('driver', {}).get('version', '?')}"
        + (f", Cassandra {cas}" if cas else "") + f", {env.get('machine', {}).get('cpus_usable', '?')} CPU(s)",
        fontsize=11,
    )
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.chart", description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("-o", "--output", help="PNG path (default: chart.png next to the results)")
    args = ap.parse_args(argv)
    out = args.output or str(Path(args.results).with_name("chart.png"))
    print(draw(common.load_json(args.results), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
