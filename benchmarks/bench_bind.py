"""Binding a prepared statement: the driver's ``PreparedStatement.bind`` against ours (``pyfactories.binding``).

    python -m benchmarks.bench_bind [--size quick|full] [--rounds N] [--json PATH] [--no-python]

The statement is ``bench_timeouts``' prepared 10-column INSERT (int, bigint, text, double, boolean...;
its routing key the int partition key), built here as the driver builds it from a PREPARE response,
so no server is needed. One call binds 100 different rows; figures are per bind. Two cases:

* ``bind + routing key``: ``bind(values)`` and then its ``routing_key``, which a token-aware session
  reads for every request (the driver computes it then; ours has it from the bind);
* ``bind``: the bind alone.

Harness: ``benchmarks.timing``'s calibrated loops and interleaved rounds (driver, ours, ours in pure
Python, then rotated), in this process; medians of the per-round figures, ratios the median of the
per-round ratios (with their range).
"""

from __future__ import annotations

import random
import statistics
import sys
from typing import Any, Callable, Sequence

from cassandra import cqltypes
from cassandra.protocol import ColumnMetadata
from cassandra.query import PreparedStatement

from pyfactories import _binding, _bindspec

from . import cli, timing
from .bench_timeouts import INSERT, KEYSPACE
from .tables import fmt_ns, fmt_ratio, markdown_table

DEPTH = "bind"
SIZES = {"quick": {"rounds": 7, "sample_ms": 20.0}, "full": {"rounds": 21, "sample_ms": 50.0},
         "tiny": {"rounds": 3, "sample_ms": 1.0}}
ROWS_PER_CALL = 100
#: ``bench_timeouts``' table: k int PRIMARY KEY, c1 int, c2 bigint, c3 text, c4 double, c5 boolean, c6 int,
#: c7 text, c8 bigint, c9 double.
COLUMNS = (("k", "Int32Type"), ("c1", "Int32Type"), ("c2", "LongType"), ("c3", "UTF8Type"), ("c4", "DoubleType"),
           ("c5", "BooleanType"), ("c6", "Int32Type"), ("c7", "UTF8Type"), ("c8", "LongType"), ("c9", "DoubleType"))
BINDS = {"driver": lambda prepared, values: prepared.bind(values), "ours": _binding.bind, "ours (py)": _bindspec.bind}
CASES = ("bind + routing key", "bind")


def statement() -> PreparedStatement:
    """The INSERT as the driver prepares it (protocol v5, routing key: the partition key ``k``)."""
    meta = [ColumnMetadata(KEYSPACE, "inserts", name, getattr(cqltypes, cls)) for name, cls in COLUMNS]
    return PreparedStatement(meta, b"bench-bind", [0], INSERT, KEYSPACE, 5, None, None)


def rows(count: int = ROWS_PER_CALL) -> list[tuple]:
    """Rows of ``bench_timeouts``' kind."""
    rng = random.Random("bind")
    return [(i, rng.randrange(2**31), rng.randrange(2**62), f"text {i}", rng.random(), bool(i & 1), i,
             "x" * (i % 20), i * 7, i / 3) for i in range(count)]


def _routed(bind: Callable[[Any, Any], Any]) -> Callable[[Any, list], None]:
    def run(prepared: Any, batch: list) -> None:
        for values in batch:
            bind(prepared, values).routing_key

    return run


def _alone(bind: Callable[[Any, Any], Any]) -> Callable[[Any, list], None]:
    def run(prepared: Any, batch: list) -> None:
        for values in batch:
            bind(prepared, values)

    return run


def default_spec(size: str = "quick", python_twin: bool = True) -> dict[str, Any]:
    return {**SIZES[size], "size": size, "python_twin": python_twin, "rows_per_call": ROWS_PER_CALL}


def run(spec: dict[str, Any], say=print) -> dict[str, Any]:
    say(f"bind: {spec['rounds']} interleaved rounds of ~{spec['sample_ms']} ms samples")
    prepared, batch = statement(), rows(spec["rows_per_call"])
    names = [n for n in BINDS if spec["python_twin"] or n != "ours (py)"]
    timing.settle_heap()
    cases = []
    for case, wrap in zip(CASES, (_routed, _alone)):
        cells = [(name, wrap(BINDS[name]), prepared, batch) for name in names]
        samples, loops = timing.interleaved_samples(cells, spec["rounds"], int(spec["sample_ms"] * 1e6))
        per_bind = {name: [ns / spec["rows_per_call"] for ns in samples[name]] for name in names}
        results = {}
        for name in names:
            ratios = [o / d for o, d in zip(per_bind[name], per_bind["driver"])]
            results[name] = {"ns": statistics.median(per_bind[name]), "samples_ns": per_bind[name],
                             "vs_driver": statistics.median(ratios), "range": [min(ratios), max(ratios)],
                             "loops": loops[name]}
        cases.append({"case": case, "results": results})
    return {"depth": DEPTH, "config": spec, "cases": cases}


def render(section: dict[str, Any]) -> str:
    header = ["case", "implementation", "per bind", "vs. driver", "range of per-round ratios"]
    table = []
    for case in section["cases"]:
        for name, res in case["results"].items():
            table.append([case["case"], name, fmt_ns(res["ns"]), fmt_ratio(res["vs_driver"]),
                          f"{res['range'][0]:.2f}–{res['range'][1]:.2f}"])
    cfg = section["config"]
    return "\n".join([
        f"### Binding a prepared 10-column INSERT ({cfg['rounds']} interleaved rounds, medians)", "",
        markdown_table(header, table), "",
        "`driver` = the driver's `PreparedStatement.bind`; `ours` = `pyfactories.binding.bind` (compiled), "
        "`ours (py)` = its pure-Python specification. Both give the same `BoundStatement`.",
    ]) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = cli.bench_parser("benchmarks.bench_bind", __doc__, SIZES)
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default: by size)")
    ap.add_argument("--no-python", action="store_true", help="leave out the pure-Python specification")
    args = ap.parse_args(list(sys.argv[1:] if argv is None else argv))
    spec = cli.apply_overrides(default_spec(args.size, python_twin=not args.no_python), None, args.rounds)
    cli.print_and_save(run(spec), render, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
