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

``copy_tuples`` is the baseline of issue 2, "copying the rows into new plain
tuples": ``list(map(tuple, rows))`` on the same values held as lists (a tuple
of a tuple is the same object, so copying the tuples would allocate nothing).
For issue 2's shape (10 mixed columns) the copy and ``cached_named_tuple``
are timed a second time with every result of a sample kept alive
(``*_kept``): dropped results let the next call's rows come back from a free
list (CPython's for plain tuples, ``ext/rows.h``'s for our named rows; the
driver's namedtuple instances have none), so both orders are shown.

``tuple`` is the driver's ``tuple_factory``, which returns its input: its
figure is the cost of a call, not of building rows. The fast path has no
column here: it builds rows while decoding, so it has no separate
row-building step to time; see ``bench_decode`` and ``bench_e2e``.
"""

from __future__ import annotations

import sys
from typing import Any, Sequence

from . import common, shapes, targets
from .common import COUNTERPART, SHORT, fmt_ns, fmt_ratio, markdown_table

ROWS = (1, 10, 100, 1000, 5000)
COLS = (3, 10, 50)

SIZES: dict[str, dict[str, Any]] = {
    # one process, 5 rounds of ~0.6 ms samples: a few seconds, figures within some 10 %
    "quick": {"processes": 1, "rounds": 5, "sample_ms": 0.6},
    # three processes x 7 rounds of ~4 ms samples: about two minutes
    "full": {"processes": 4, "rounds": 7, "sample_ms": 4.0},
    # for tests: as small as still meaningful
    "tiny": {"processes": 1, "rounds": 3, "sample_ms": 0.05},
}

FACTORY_ORDER = ("tuple", "copy_tuples", "named_tuple", "cached_named_tuple", "dict", "pf_dict",
                 "ordered_dict", "pf_ordered_dict", "py_cached_named_tuple", "py_dict", "py_ordered_dict")


def default_spec(size: str = "quick", rows: Sequence[int] = ROWS, cols: Sequence[int] = COLS,
                 kinds: Sequence[str] = shapes.KINDS, python_twins: bool = True) -> dict[str, Any]:
    cfg = dict(SIZES[size])
    cfg.update(size=size, rows=list(rows), cols=list(cols), kinds=list(kinds), python_twins=python_twins)
    return cfg


def _work(spec: dict[str, Any]) -> dict[str, Any]:
    """One worker process: every shape, every factory, interleaved rounds."""
    factories = common.row_factories(include_python=spec["python_twins"])
    factories["copy_tuples"] = common.copy_tuples
    names = [n for n in FACTORY_ORDER if n in factories]
    common.clear_caches()
    inputs = []
    for rows in spec["rows"]:
        for cols in spec["cols"]:
            for kind in spec["kinds"]:
                colnames, data = shapes.make_rows(rows, cols, kind)
                inputs.append((shapes.case_id(rows, cols, kind), colnames, data, [list(r) for r in data]))
    common.settle_heap()
    target_ns = int(spec["sample_ms"] * 1e6)
    samples: dict[str, dict[str, list[float]]] = {}
    loops: dict[str, dict[str, int]] = {}
    for cid, colnames, data, data_lists in inputs:
        cells: list[tuple] = [(n, factories[n], colnames, data_lists if n == "copy_tuples" else data) for n in names]
        if cid.endswith(f"x{targets.ISSUE2_COLS} {targets.ISSUE2_KIND}"):
            # issue 2's comparison again with every result kept alive (see common.time_loops_kept)
            cells.append(("copy_tuples_kept", factories["copy_tuples"], colnames, data_lists, True))
            cells.append(("cached_named_tuple_kept", factories["cached_named_tuple"], colnames, data, True))
        samples[cid], loops[cid] = common.interleaved_samples(cells, spec["rounds"], target_ns)
    return {"samples": samples, "loops": loops}


def run(spec: dict[str, Any], say=print) -> dict[str, Any]:
    """Run the worker processes and summarise: the ``factory_only`` section of the results."""
    n_cases = len(spec["rows"]) * len(spec["cols"]) * len(spec["kinds"])
    say(f"factory-only: {n_cases} shapes, {spec['processes']} process(es) x {spec['rounds']} rounds "
        f"of ~{spec['sample_ms']} ms samples")
    results = common.run_workers("benchmarks.bench_factories", spec, spec["processes"], say=say)
    merged = common.merge_samples(results)
    cases = []
    for rows in spec["rows"]:
        for cols in spec["cols"]:
            for kind in spec["kinds"]:
                cid = shapes.case_id(rows, cols, kind)
                res = {}
                for name, vals in merged[cid].items():
                    s = common.summarize(vals)
                    res[name] = {
                        "ns_per_call": s["median"],
                        "ns_per_row": s["median"] / rows,
                        "rel_iqr": s["rel_iqr"],
                        "n": s["n"],
                        "loops": [r["loops"][cid][name] for r in results],
                    }
                cases.append({"id": cid, "rows": rows, "cols": cols, "kind": kind, "results": res})
    section = {
        "depth": "factory_only",
        "config": spec,
        "method": ("median of all samples (ns per call); samples from interleaved rounds in "
                   f"{spec['processes']} fresh process(es); ratios between medians of this run; "
                   "copy_tuples = list(map(tuple, rows as lists))"),
        "cases": cases,
    }
    section["verdicts"] = targets.as_json(targets.factory_only(section))
    return section


# --- tables --------------------------------------------------------------------------------

def _get(res: dict[str, Any], name: str, key: str = "ns_per_call") -> float | None:
    r = res.get(name)
    return r[key] if r else None


def matrix_table(section: dict[str, Any]) -> str:
    """Every shape: ns per row of each factory, and how many times faster ours is than the driver's."""
    present = {n for c in section["cases"] for n in c["results"]}
    names = [n for n in FACTORY_ORDER if n in present]
    header = ["rows x cols kind"]
    for n in names:
        header.append(SHORT[n])
        if n in ("cached_named_tuple", "pf_dict", "pf_ordered_dict"):
            header.append(f"{SHORT[COUNTERPART[n]]}/{SHORT[n]}")
    rows = []
    for c in section["cases"]:
        res = c["results"]
        line = [c["id"]]
        for n in names:
            line.append(fmt_ns(_get(res, n, "ns_per_row")))
            if n in ("cached_named_tuple", "pf_dict", "pf_ordered_dict"):
                line.append(fmt_ratio(common.ratio(_get(res, COUNTERPART[n]), _get(res, n))))
        rows.append(line)
    return markdown_table(header, rows)


def issue2_table(section: dict[str, Any]) -> str:
    """Issue 2's table: 10 mixed columns, ns per call, ratios against the driver and the copy baseline."""
    header = ["rows", "named", "pf_named", "named/pf_named", "copy", "pf_named/copy",
              "copy kept", "pf_named kept", "ratio kept",
              "dict", "pf_dict", "dict/pf_dict", "odict", "pf_odict", "odict/pf_odict"]
    rows = []
    for c in section["cases"]:
        if c["cols"] != targets.ISSUE2_COLS or c["kind"] != targets.ISSUE2_KIND:
            continue
        r = c["results"]
        rows.append([
            str(c["rows"]),
            fmt_ns(_get(r, "named_tuple")), fmt_ns(_get(r, "cached_named_tuple")),
            fmt_ratio(common.ratio(_get(r, "named_tuple"), _get(r, "cached_named_tuple"))),
            fmt_ns(_get(r, "copy_tuples")),
            fmt_ratio(common.ratio(_get(r, "cached_named_tuple"), _get(r, "copy_tuples"))),
            fmt_ns(_get(r, "copy_tuples_kept")), fmt_ns(_get(r, "cached_named_tuple_kept")),
            fmt_ratio(common.ratio(_get(r, "cached_named_tuple_kept"), _get(r, "copy_tuples_kept"))),
            fmt_ns(_get(r, "dict")), fmt_ns(_get(r, "pf_dict")),
            fmt_ratio(common.ratio(_get(r, "dict"), _get(r, "pf_dict"))),
            fmt_ns(_get(r, "ordered_dict")), fmt_ns(_get(r, "pf_ordered_dict")),
            fmt_ratio(common.ratio(_get(r, "ordered_dict"), _get(r, "pf_ordered_dict"))),
        ])
    return markdown_table(header, rows)


def render(section: dict[str, Any]) -> str:
    cfg = section["config"]
    parts = [
        f"### Factory only ({cfg['processes']} process(es) x {cfg['rounds']} rounds, medians)",
        "",
        "Issue 2 table: 10 columns of mixed values, time per call. "
        "`a/b` = how many times `b` is faster than `a` (or, for `pf_named/copy`, what our named rows cost "
        "relative to copying the rows into new plain tuples: `list(map(tuple, rows_as_lists))`). "
        "The `kept` columns time the copy and our named rows again with every result of a sample kept alive: "
        "when results are dropped at once, the next call's rows come back from a free list (CPython's for plain "
        "tuples, ours for our named rows; up to 2,000 per length) and trigger no collection.",
        "",
        issue2_table(section),
        "",
        "All shapes: time per row (per call / rows). `tuple` is the driver's tuple_factory (returns its input); "
        "`py_*` are pyfactories' pure-Python twins.",
        "",
        matrix_table(section),
        "",
        *targets.fenced("Issue 2 targets:", section["verdicts"]),
    ]
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        common.worker_main(argv[1:], _work)
        return 0
    ap = common.bench_parser("benchmarks.bench_factories", __doc__, SIZES, offline=True)
    ap.add_argument("--rows", default=",".join(map(str, ROWS)), help="comma-separated row counts")
    ap.add_argument("--cols", default=",".join(map(str, COLS)), help="comma-separated column counts")
    ap.add_argument("--kinds", default=",".join(shapes.KINDS), help="ints,text,mixed")
    args = ap.parse_args(argv)
    spec = default_spec(args.size, [int(x) for x in args.rows.split(",")], [int(x) for x in args.cols.split(",")],
                        args.kinds.split(","), python_twins=not args.no_python)
    section = run(common.apply_overrides(spec, args.processes, args.rounds))
    common.print_and_save("factory_only", section, render, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
