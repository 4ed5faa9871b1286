"""Factory-only benchmark: each row factory on the same synthetic rows, no server.

    python -m benchmarks.bench_factories [--size quick|full] [--json PATH]
    python -m benchmarks.bench_factories --rows 1,1000 --cols 10 --kinds mixed --processes 1

For every shape (rows x columns x kind of values) every factory is called on
the same ``(colnames, rows)``. Harness: each worker process is a fresh
interpreter; it builds the inputs, freezes them out of the collector's way,
calibrates the loops per sample of every factory (a warm-up call fills our
caches, then one warm-up sample is dropped), then takes ``rounds`` samples
per factory, the factories taking turns (A B C, B C A, ...). Several worker
processes run one after another; the figure is the median of all samples, in
nanoseconds per call and per row, and ratios are taken between medians of the
same run.

``copy_tuples`` is the baseline "copying the rows into new plain tuples":
``list(map(tuple, rows))`` on the same values held as lists (a tuple of a
tuple is the same object, so copying the tuples would allocate nothing).
For the mixed table's shape (10 mixed columns) the copy and our named rows
are timed a second time with every result of a sample kept alive
(``*_kept``): dropped results let the next call's rows come back from a free
list (CPython's for plain tuples, ``ext/rows/rows.h``'s for our named rows; the
driver's namedtuple instances have none), so both orders are shown.

The factories are those of ``profiling.factories`` that work on plain
``(colnames, rows)``. ``tuple`` is the driver's ``tuple_factory``, which
returns its input: its figure is the cost of a call, not of building rows.
The fast path has no column here: it builds rows while decoding, so it has no
separate row-building step to time; see ``bench_decode`` and ``bench_e2e``.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Iterable, Iterator, Sequence

from profiling.factories import (BY_NAME, REFERENCE, color, counterpart, grouped, is_ours, label, registered_among,
                                 of_family, offline, versus, versus_label)

from .data import shapes
from .harness import cli, depths, timing, workers
from .harness.stats import per_call, ratio
from .reporting import chart, targets
from .reporting.tables import fmt_ns, fmt_ratio, markdown_table
from .reporting.targets import MIXED_COLS, MIXED_KIND

THIS = depths.BY_NAME["factory"]
ROWS = (1, 10, 100, 200, 1000, 5000)
COLS = (3, 10, 50)

SIZES: dict[str, dict[str, Any]] = {
    # one process, 5 rounds of ~0.6 ms samples: a few seconds, figures within some 10 %
    "quick": {"processes": 1, "rounds": 5, "sample_ms": 0.6},
    # three processes x 7 rounds of ~4 ms samples: about two minutes
    "full": {"processes": 4, "rounds": 7, "sample_ms": 4.0},
    # for tests: as small as still meaningful
    "tiny": {"processes": 1, "rounds": 3, "sample_ms": 0.05},
}


def copy_tuples(colnames: Sequence[str], rows: Sequence[list]) -> list[tuple]:
    """The baseline "copy the rows into new plain tuples".

    It must be called with the rows as *lists*: ``tuple(t)`` of a tuple returns
    ``t`` itself, so copying tuples would allocate nothing.
    """
    return list(map(tuple, rows))


# --- the baselines of this depth, beside the registry's factories -------------------------------

COPY = "copy_tuples"
#: Our named rows: the factory the copy baseline is held against (and timed again with results kept).
NAMED = next(f.name for f in of_family("pyfactories") if f.rows == "named")
#: The copy and our named rows again, every result of a sample kept alive (``timing.time_loops_kept``).
KEPT = {COPY: f"{COPY}_kept", NAMED: f"{NAMED}_kept"}
BASELINE_LABELS = {COPY: "copy", KEPT[COPY]: "copy_kept", KEPT[NAMED]: f"{label(NAMED)}_kept"}


def short(name: str) -> str:
    """A column label: the baselines' own, else the registry's."""
    return BASELINE_LABELS.get(name) or label(name)


def order(present: Iterable[str]) -> list[str]:
    """Table order of ``present``: the registry's reading order, the copy baseline (if there) right
    after the reference; the kept variants are for the mixed table only."""
    present = set(present)
    names = grouped(n for n in present if n in BY_NAME)
    at = names.index(REFERENCE) + 1 if REFERENCE in names else 0
    return names[:at] + [COPY] * (COPY in present) + names[at:]


def timed_factories(include_python: bool = True) -> dict[str, Callable[[Any, Any], Any]]:
    """Every function timed at every shape, in table order: the registry's factories that work on plain
    ``(colnames, rows)``, and the copy baseline."""
    timed = {**offline(include_python), COPY: copy_tuples}
    return {n: timed[n] for n in order(timed)}


def default_spec(size: str = "quick", rows: Sequence[int] = ROWS, cols: Sequence[int] = COLS,
                 kinds: Sequence[str] = shapes.KINDS, python_twins: bool = True) -> dict[str, Any]:
    cfg = dict(SIZES[size])
    cfg.update(size=size, rows=list(rows), cols=list(cols), kinds=list(kinds), python_twins=python_twins)
    return cfg


def _shapes(spec: dict[str, Any]) -> Iterator[tuple[int, int, str]]:
    for rows in spec["rows"]:
        for cols in spec["cols"]:
            for kind in spec["kinds"]:
                yield rows, cols, kind


def _work(spec: dict[str, Any]) -> dict[str, Any]:
    """One worker process: every shape, every factory, interleaved rounds."""
    factories = timed_factories(include_python=spec["python_twins"])
    timing.clear_caches()
    inputs = []
    for rows, cols, kind in _shapes(spec):
        colnames, data = shapes.make_rows(rows, cols, kind)
        inputs.append((shapes.case_id(rows, cols, kind), colnames, data, [list(r) for r in data]))
    timing.settle_heap()
    target_ns = int(spec["sample_ms"] * 1e6)
    samples: dict[str, dict[str, list[float]]] = {}
    loops: dict[str, dict[str, int]] = {}
    for cid, colnames, data, data_lists in inputs:
        cells: list[tuple] = [(n, f, colnames, data_lists if n == COPY else data) for n, f in factories.items()]
        if cid.endswith(f"x{MIXED_COLS} {MIXED_KIND}"):
            # the mixed table's comparison again with every result kept alive (see timing.time_loops_kept)
            cells.append((KEPT[COPY], copy_tuples, colnames, data_lists, True))
            cells.append((KEPT[NAMED], factories[NAMED], colnames, data, True))
        samples[cid], loops[cid] = timing.interleaved_samples(cells, spec["rounds"], target_ns)
    return {"samples": samples, "loops": loops}


def run(spec: dict[str, Any], say=print) -> dict[str, Any]:
    """Run the worker processes and summarise: the ``factory_only`` section of the results."""
    n_cases = len(spec["rows"]) * len(spec["cols"]) * len(spec["kinds"])
    say(f"factory-only: {n_cases} shapes, {spec['processes']} process(es) x {spec['rounds']} rounds "
        f"of ~{spec['sample_ms']} ms samples")
    results = workers.run_workers(THIS.module, spec, spec["processes"], say=say)
    merged = workers.merge_samples(results)
    cases = []
    for rows, cols, kind in _shapes(spec):
        cid = shapes.case_id(rows, cols, kind)
        res = {name: {**per_call(vals, rows), "loops": [r["loops"][cid][name] for r in results]}
               for name, vals in merged[cid].items()}
        cases.append({"id": cid, "rows": rows, "cols": cols, "kind": kind, "results": res})
    section = {
        "depth": THIS.key,
        "config": spec,
        "method": ("median of all samples (ns per call); samples from interleaved rounds in "
                   f"{spec['processes']} fresh process(es); ratios between medians of this run; "
                   "copy_tuples = list(map(tuple, rows as lists))"),
        "cases": cases,
    }
    section["verdicts"] = targets.as_json(verdicts(section))
    return section


def verdicts(section: dict[str, Any]) -> list[targets.Verdict]:
    return targets.factory_only(section)


def figures(section: dict[str, Any]) -> Iterator[depths.Figure]:
    for c in section.get("cases", []):
        for f, r in c["results"].items():
            yield depths.Figure(c["id"], f, "ns/call", r.get("ns_per_call"), headline=True)


# --- tables --------------------------------------------------------------------------------

def _get(res: dict[str, Any], name: str, key: str = "ns_per_call") -> float | None:
    r = res.get(name)
    return r[key] if r else None


def _speedup(res: dict[str, Any], ours: str) -> str:
    return fmt_ratio(ratio(_get(res, counterpart(ours)), _get(res, ours)))


def matrix_table(section: dict[str, Any]) -> str:
    """Every shape: ns per row of each factory, and how many times faster ours is than the driver's."""
    names = order({n for c in section["cases"] for n in c["results"]})
    faster = versus(names)
    header = ["rows x cols kind"]
    for n in names:
        header += [short(n)] + ([versus_label(n)] if n in faster else [])
    rows = []
    for c in section["cases"]:
        res = c["results"]
        line = [c["id"]]
        for n in names:
            line += [fmt_ns(_get(res, n, "ns_per_row"))] + ([_speedup(res, n)] if n in faster else [])
        rows.append(line)
    return markdown_table(header, rows)


def mixed_table(section: dict[str, Any]) -> str:
    """The mixed table: 10 mixed columns, ns per call, ratios against the driver and the copy baseline."""
    ours = [f.name for f in of_family("pyfactories")]
    header = ["rows"]
    for n in ours:
        header += [label(counterpart(n)), label(n), versus_label(n)]
        if n == NAMED:
            header += [short(COPY), f"{label(n)}/{short(COPY)}", f"{short(COPY)} kept", f"{label(n)} kept",
                       "ratio kept"]
    rows = []
    for c in section["cases"]:
        if c["cols"] != MIXED_COLS or c["kind"] != MIXED_KIND:
            continue
        r = c["results"]
        line = [str(c["rows"])]
        for n in ours:
            line += [fmt_ns(_get(r, counterpart(n))), fmt_ns(_get(r, n)), _speedup(r, n)]
            if n == NAMED:
                line += [fmt_ns(_get(r, COPY)), fmt_ratio(ratio(_get(r, n), _get(r, COPY))),
                         fmt_ns(_get(r, KEPT[COPY])), fmt_ns(_get(r, KEPT[n])),
                         fmt_ratio(ratio(_get(r, KEPT[n]), _get(r, KEPT[COPY])))]
        rows.append(line)
    return markdown_table(header, rows)


def render(section: dict[str, Any]) -> str:
    cfg = section["config"]
    named, copy = label(NAMED), short(COPY)
    parts = [
        f"### {THIS.title} ({cfg['processes']} process(es) x {cfg['rounds']} rounds, medians)",
        "",
        f"Mixed table: {MIXED_COLS} columns of {MIXED_KIND} values, time per call. "
        f"`a/b` = how many times `b` is faster than `a` (or, for `{named}/{copy}`, what our named rows cost "
        "relative to copying the rows into new plain tuples: `list(map(tuple, rows_as_lists))`). "
        "The `kept` columns time the copy and our named rows again with every result of a sample kept alive: "
        "when results are dropped at once, the next call's rows come back from a free list (CPython's for plain "
        "tuples, ours for our named rows; up to 2,000 per length) and trigger no collection.",
        "",
        mixed_table(section),
        "",
        "All shapes: time per row (per call / rows). `tuple` is the driver's tuple_factory (returns its input); "
        "`py_*` are pyfactories' pure-Python twins.",
        "",
        matrix_table(section),
        "",
        *targets.fenced("Targets:", section["verdicts"]),
    ]
    return "\n".join(parts)


# --- chart ---------------------------------------------------------------------------------

def _panel_title(cols: int, kind: str) -> str:
    return f"{THIS.title}: {cols} {kind} columns,\ncost relative to copying into new plain tuples"


def _copy_panel(ax: Any, section: dict[str, Any]) -> None:
    """Each factory's time relative to the copy baseline, by rows per call, at the mixed table's shape
    (or the first shape of the run if it did not time that one)."""
    cols, kind = MIXED_COLS, MIXED_KIND
    if not any(c["cols"] == cols and c["kind"] == kind for c in section["cases"]):
        cols, kind = min(c["cols"] for c in section["cases"]), min(c["kind"] for c in section["cases"])
    cases = sorted((c for c in section["cases"] if c["cols"] == cols and c["kind"] == kind), key=lambda c: c["rows"])
    present = {n for c in cases for n in c["results"]} - {REFERENCE}
    for name in registered_among(present, "driver", "pyfactories"):
        xs, ys = [], []
        for c in cases:
            r = ratio(_get(c["results"], name), _get(c["results"], COPY))
            if r is not None:
                xs.append(c["rows"])
                ys.append(r)
        if xs:
            ax.plot(xs, ys, marker="o", label=name, color=color(name),
                    ls="-" if is_ours(name) else "--")
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    ax.axhline(1.3, color="grey", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rows per call", fontsize=9)
    ax.set_ylabel(f"time / time of {COPY}", fontsize=9)
    ax.set_title(_panel_title(cols, kind), fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)


PANELS = (chart.Panel(_panel_title(MIXED_COLS, MIXED_KIND), _copy_panel),)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if workers.is_worker(argv):
        return workers.worker_main(argv, _work)
    ap = cli.bench_parser(THIS.module, __doc__, SIZES, offline=True)
    ap.add_argument("--rows", default=",".join(map(str, ROWS)), help="comma-separated row counts")
    ap.add_argument("--cols", default=",".join(map(str, COLS)), help="comma-separated column counts")
    ap.add_argument("--kinds", default=",".join(shapes.KINDS), help="ints,text,mixed")
    args = ap.parse_args(argv)
    spec = default_spec(args.size, [int(x) for x in args.rows.split(",")], [int(x) for x in args.cols.split(",")],
                        args.kinds.split(","), python_twins=not args.no_python)
    section = run(cli.apply_overrides(spec, args.processes, args.rounds))
    cli.print_and_save(section, render, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
