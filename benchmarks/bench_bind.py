"""Binding a prepared statement: the driver's ``PreparedStatement.bind`` against ours (``pyfactories.binding``).

    python -m benchmarks.bench_bind [--size quick|full] [--rounds N] [--json PATH] [--no-python] [--e2e]

The statement is the connection benchmarks' prepared 10-column INSERT (``benchmarks.data.inserts``:
int, bigint, text, double, boolean...; its routing key the int partition key), built here as the driver builds it from a PREPARE response,
so no server is needed. One call binds 100 different rows; figures are per bind. Two cases:

* ``bind + routing key``: ``bind(values)`` and then its ``routing_key``, which a token-aware session
  reads for every request (the driver computes it then; ours has it from the bind);
* ``bind``: the bind alone.

Harness: ``benchmarks.harness.timing``'s calibrated loops and interleaved rounds (driver, ours, ours in pure
Python, then rotated), in this process; medians of the per-round figures, ratios the median of the
per-round ratios (with their range).

``--e2e`` adds the same INSERT end to end (:func:`end_to_end`, a server from ``profiling.cluster.reach``:
``PYFACTORIES_HOSTS`` or the local node): client CPU per INSERT through ``execute_concurrent`` at 1,000 in
flight on our connection (``pyfactories.enable``), with the driver's bind
(``binds=False``) and with ours, taking turns round by round, in its own keyspace.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from typing import Any, Callable, Sequence

from cassandra import cqltypes
from cassandra.protocol import ColumnMetadata
from cassandra.query import PreparedStatement

from pyfactories.binding import _binding
from pyfactories.binding import _binding_py

from .data.inserts import INSERT, KEYSPACE
from .harness import cli, timing
from .reporting.tables import fmt_ns, fmt_ratio, markdown_table

DEPTH = "bind"
SIZES = {"quick": {"rounds": 7, "sample_ms": 20.0}, "full": {"rounds": 21, "sample_ms": 50.0},
         "tiny": {"rounds": 3, "sample_ms": 1.0}}
ROWS_PER_CALL = 100
#: The table of ``benchmarks.data.inserts``: k int PRIMARY KEY, c1 int, c2 bigint, c3 text, c4 double, c5 boolean, c6 int,
#: c7 text, c8 bigint, c9 double.
COLUMNS = (("k", "Int32Type"), ("c1", "Int32Type"), ("c2", "LongType"), ("c3", "UTF8Type"), ("c4", "DoubleType"),
           ("c5", "BooleanType"), ("c6", "Int32Type"), ("c7", "UTF8Type"), ("c8", "LongType"), ("c9", "DoubleType"))
BINDS = {"driver": lambda prepared, values: prepared.bind(values), "ours": _binding.bind, "ours (py)": _binding_py.bind}
CASES = ("bind + routing key", "bind")


def statement() -> PreparedStatement:
    """The INSERT as the driver prepares it (protocol v5, routing key: the partition key ``k``)."""
    meta = [ColumnMetadata(KEYSPACE, "inserts", name, getattr(cqltypes, cls)) for name, cls in COLUMNS]
    return PreparedStatement(meta, b"bench-bind", [0], INSERT, KEYSPACE, 5, None, None)


def rows(count: int = ROWS_PER_CALL) -> list[tuple]:
    """Rows of the kind of ``benchmarks.data.inserts``."""
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


E2E_SIZES = {"quick": {"rounds": 5, "inserts": 5000}, "full": {"rounds": 11, "inserts": 20000},
             "tiny": {"rounds": 2, "inserts": 200}}
E2E_KEYSPACE = "binding_bench"
E2E_SCHEMA = (
    f"CREATE KEYSPACE IF NOT EXISTS {E2E_KEYSPACE} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}",
    f"CREATE TABLE IF NOT EXISTS {E2E_KEYSPACE}.inserts (k int PRIMARY KEY, c1 int, c2 bigint, c3 text, c4 double, "
    "c5 boolean, c6 int, c7 text, c8 bigint, c9 double)",
)


def end_to_end(contact: Any, rounds: int, inserts: int, in_flight: int = 1000) -> dict[str, Any]:
    """Client CPU (this process, all threads) per INSERT, with the driver's bind and with ours, in turns."""
    from cassandra.concurrent import execute_concurrent_with_args

    import pyfactories
    from profiling.cluster import connect
    from pyfactories import connection

    cluster, session = connect(contact, protocol_version=5, **connection.cluster_options())
    try:
        for cql in E2E_SCHEMA:
            session.execute(cql, timeout=60)
        batch = rows(inserts)
        insert = INSERT.replace(f"{KEYSPACE}.", f"{E2E_KEYSPACE}.")
        series: dict[str, list[float]] = {"driver": [], "ours": []}
        for r in range(rounds + 1):  # the first round warms up and is dropped
            for name in ("driver", "ours")[:: 1 if r % 2 else -1]:
                decoded = pyfactories.enable(session, binds=name == "ours")["rows"]
                if not decoded.on:
                    raise RuntimeError(f"the fast path is off: {decoded.why}")
                prepared = session.prepare(insert)
                t0 = time.process_time()
                execute_concurrent_with_args(session, prepared, batch, concurrency=in_flight, raise_on_first_error=True)
                if r:
                    series[name].append((time.process_time() - t0) / inserts * 1e6)
    finally:
        cluster.shutdown()
    ratios = [o / d for o, d in zip(series["ours"], series["driver"])]
    return {"rounds": rounds, "inserts": inserts, "in_flight": in_flight, "cpu_us": series,
            "driver_us": statistics.median(series["driver"]), "ours_us": statistics.median(series["ours"]),
            "ratio": statistics.median(ratios), "range": [min(ratios), max(ratios)]}


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
        *_e2e_lines(section.get("end_to_end")),
    ]) + "\n"


def _e2e_lines(e2e: dict[str, Any] | None) -> list[str]:
    if not e2e:
        return []
    return ["", f"End to end ({e2e['inserts']} INSERTs per round through `execute_concurrent`, {e2e['in_flight']} in "
            f"flight, our connection, {e2e['rounds']} interleaved rounds): client CPU per INSERT, driver's bind "
            f"{e2e['driver_us']:.1f} µs, ours {e2e['ours_us']:.1f} µs, {e2e['ratio']:.2f}x "
            f"({e2e['range'][0]:.2f}–{e2e['range'][1]:.2f})."]


def main(argv: Sequence[str] | None = None) -> int:
    ap = cli.bench_parser("benchmarks.bench_bind", __doc__, SIZES)
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default: by size)")
    ap.add_argument("--no-python", action="store_true", help="leave out the pure-Python specification")
    ap.add_argument("--e2e", action="store_true", help="also end to end, through a server (see above)")
    args = ap.parse_args(list(sys.argv[1:] if argv is None else argv))
    spec = cli.apply_overrides(default_spec(args.size, python_twin=not args.no_python), None, args.rounds)
    section = run(spec)
    if args.e2e:
        from profiling.cluster import reach

        with reach() as contact:
            section["end_to_end"] = end_to_end(contact, **E2E_SIZES[args.size])
    cli.print_and_save(section, render, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
