"""The factory-only mixed table measured by pyperf: a cross-check of ``bench_factories``' harness.

    python -m benchmarks.pyperf_factories --fast -o pyperf.json          # a few minutes
    python -m benchmarks.pyperf_factories --rows 1,1000 --factories named_tuple,cached_named_tuple -o a.json
    python -m pyperf stats pyperf.json ; python -m pyperf compare_to old.json new.json

Every pyperf option works (``--fast``, ``--rigorous``, ``-p``, ``--affinity``,
...). pyperf runs each benchmark in its own worker processes one after
another (not interleaved), so ``make bench`` uses ``bench_factories``; this
script exists to check that both harnesses agree. Same inputs as
``bench_factories`` (``benchmarks.data.shapes``), same factories and copy baseline;
by default the mixed table's: our compiled factories, the driver's they
replace, and the copy.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from profiling.factories import counterpart, of_family

from .bench_factories import COPY, ROWS, timed_factories
from .data import shapes
from .reporting.targets import MIXED_COLS, MIXED_KIND


def default_factories() -> list[str]:
    """The mixed table's factories: each of ours after the driver's it replaces, then the copy baseline."""
    return [n for f in of_family("pyfactories") for n in (counterpart(f.name), f.name)] + [COPY]


def _time(loops: int, fn: Callable[[Any, Any], Any], a: Any, b: Any) -> float:
    it = range(loops)
    t0 = time.perf_counter()
    for _ in it:
        fn(a, b)
    return time.perf_counter() - t0


def _forward(cmd: list[str], args: Any) -> None:
    cmd.extend(["--rows", args.rows, "--cols", str(args.cols), "--kind", args.kind, "--factories", args.factories])


def main() -> None:
    import pyperf

    runner = pyperf.Runner(program_args=("-m", "benchmarks.pyperf_factories"),
                           add_cmdline_args=_forward)
    runner.argparser.add_argument("--rows", default=",".join(map(str, ROWS)))
    runner.argparser.add_argument("--cols", type=int, default=MIXED_COLS)
    runner.argparser.add_argument("--kind", default=MIXED_KIND, choices=shapes.KINDS)
    runner.argparser.add_argument("--factories", default=",".join(default_factories()))
    args = runner.parse_args()
    factories = timed_factories()
    names = args.factories.split(",")
    unknown = [n for n in names if n not in factories]
    if unknown:
        raise SystemExit(f"unknown factories {unknown}; choose from {', '.join(factories)}")
    runner.metadata["pyfactories_rows_kind"] = args.kind
    for rows in (int(r) for r in args.rows.split(",")):
        colnames, data = shapes.make_rows(rows, args.cols, args.kind)
        lists = [list(r) for r in data]
        for name in names:
            arg = lists if name == COPY else data
            runner.bench_time_func(f"{name} {shapes.case_id(rows, args.cols, args.kind)}", _time,
                                   factories[name], colnames, arg)


if __name__ == "__main__":
    main()
