"""``python -m profiling run|attach|record|list``: where does a Cassandra client's CPU go?

``run --default`` is the short set ``make profile`` runs: the driver as configured by default, its
``tuple_factory`` and everything on (``pyfactories.enable(cluster)``), reads and writes, in a few
minutes, the answer printed first; ``run --full`` is the full grid ``make profile-full`` runs.
``--pattern`` and ``--factory`` (repeatable) narrow either or choose any other combination.
``attach --pid PID --duration S`` samples a running service; ``record -- COMMAND ...``
runs your program and profiles it from start to exit.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from typing import Any

from . import factories
from .harness import client
from .harness.patterns import PATTERNS
from .harness.runner import Options
from .harness.session import run_session
from .harness.workload import COLUMN_TYPES, STATEMENTS

#: The short default set: one request at a time, and a pipeline (their costs differ the most) x the
#: driver's default, its cheapest factory and everything on; rounds interleaved, no cProfile pass.
DEFAULT_PATTERNS = ["sync", "callback_full_pipeline"]
DEFAULT_FACTORIES = ["named_tuple", "tuple", factories.EVERYTHING_ON.name]
DEFAULT_OPS, DEFAULT_ROUNDS, DEFAULT_PROFILER = 5000, 3, "pyspy"
#: The full grid (``--full``): more patterns, our factories and the fast path on the driver's connection too.
FULL_PATTERNS = ["sync", "future_full_pipeline", "callback_full_pipeline", "execute_concurrent"]
FULL_FACTORIES = ["named_tuple", "tuple", "cached_named_tuple", "fastpath_named", factories.EVERYTHING_ON.name]
FULL_OPS, FULL_ROUNDS, FULL_PROFILER = 10000, 3, "both"
#: Any other selection: every pattern (or those named) x the factories named.
OTHER_OPS, OTHER_ROUNDS, OTHER_PROFILER = 10000, 1, "both"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m profiling", description=__doc__,
                                     epilog="row factories:\n" + factories.describe(),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the patterns, factories, column types and connection classes")
    run = sub.add_parser("run", help="profile patterns x factories against a cluster",
                         epilog="row factories:\n" + factories.describe(),
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    sets = run.add_mutually_exclusive_group()
    sets.add_argument("--default", action="store_true",
                      help=f"the short default set: {', '.join(DEFAULT_PATTERNS)} x {', '.join(DEFAULT_FACTORIES)}, "
                           f"reads and writes, -n {DEFAULT_OPS}, {DEFAULT_ROUNDS} rounds, py-spy only (minutes)")
    sets.add_argument("--full", action="store_true",
                      help=f"the full grid: {', '.join(FULL_PATTERNS)} x {', '.join(FULL_FACTORIES)}, reads and "
                           f"writes, -n {FULL_OPS}, {FULL_ROUNDS} rounds, py-spy and cProfile")
    run.add_argument("-p", "--pattern", action="append", choices=list(PATTERNS), metavar="PATTERN",
                     help="an execution pattern (repeatable; `list` names them)")
    run.add_argument("-f", "--factory", action="append", metavar="NAME|module:function",
                     help="a row factory (repeatable): a name below, its function's name "
                          "(cached_named_tuple_factory), a qualified name (pyfactories.dict_factory) or any "
                          "importable module:function; bare dict_factory and ordered_dict_factory mean the "
                          "driver's")
    run.add_argument("-n", "--num-ops", type=int, help=f"operations per run (default {DEFAULT_OPS} with --default, "
                                                       f"else {FULL_OPS})")
    run.add_argument("-H", "--hosts", help="comma-separated contact points of your cluster "
                                           "(default: start or reuse the project's local node)")
    run.add_argument("--port", type=int, help="CQL port (default 9042 or PYFACTORIES_PORT)")
    run.add_argument("-t", "--threads", type=int, default=1, help="threads per pattern (default 1)")
    run.add_argument("-c", "--num-columns", type=int, default=5, help="value columns per row (default 5)")
    run.add_argument("--column-type", default="text", choices=[*COLUMN_TYPES, "mixed"],
                     help="CQL type of the value columns (default text)")
    run.add_argument("--rows-per-query", type=int, default=10, help="rows each select returns (default 10)")
    run.add_argument("--concurrency", type=int, default=120,
                     help="requests in flight: batch/queue size, callback chains, in-flight limit "
                          "(default 120)")
    run.add_argument("--processes", type=int, default=2, help="pool size of the multiprocess patterns")
    run.add_argument("--retries", type=int, default=3, help="async_errback's retries per request")
    run.add_argument("--connection-class", choices=[*client.REACTORS, *client.REFUSED],
                     help="the driver's reactor (default libev when it loads, else asyncio)")
    run.add_argument("--connection", choices=list(client.CONNECTIONS), default="driver",
                     help="the reactor's connection class: the driver's (default), or pyfactories' "
                          "(connection.cluster_options(): its timers, compiled framing and coalesced writes; "
                          "libev and asyncio)")
    run.add_argument("--protocol-version", type=int, help="native protocol version (default: negotiated)")
    run.add_argument("--statement", choices=list(STATEMENTS), default="prepared",
                     help="prepared statements with bound values (default), or simple statements with the "
                          "values as literals in their CQL text")
    run.add_argument("--request-timeout", type=_timeout, default=30.0, metavar="none|SECONDS",
                     help="timeout passed with every request (default 30); none: no timeout, so the driver "
                          "sets no timer per request (execute_concurrent always passes none)")
    run.add_argument("--instrumentation", choices=["on", "off"], default="on",
                     help="off: no timed regions at all, for the harness's throughput without them "
                          "(then no shares are computed); default on")
    run.add_argument("--keyspace", default="pyfactories_profile")
    run.add_argument("--keep-data", action="store_true", help="do not drop the keyspace at the end")
    kind = run.add_mutually_exclusive_group()
    kind.add_argument("--read", action="store_true", help="selects only")
    kind.add_argument("--write", action="store_true", help="inserts only")
    run.add_argument("--profiler", choices=["none", "cprofile", "pyspy", "both"],
                     help=f"besides the instrumentation (default {DEFAULT_PROFILER} with --default, else both)")
    run.add_argument("--rate", type=int, default=500, help="py-spy samples per second (default 500)")
    run.add_argument("--native", action="store_true",
                     help="py-spy --native: the driver's compiled modules show in the flamegraphs by .so name, "
                          "but py-spy then pauses the client for every sample (about half the throughput)")
    run.add_argument("--cprofile-ops", type=int, help="operations of the cProfile pass (default n/4)")
    run.add_argument("--out", help="output folder (default profiles/<timestamp>)")
    run.add_argument("--repeat", type=int, metavar="N",
                     help="run each combination N times (rounds), round-robin over the combinations; the table "
                          "shows medians and min-max, and marks rows whose CPU/op differs by more than 10%% "
                          f"(default {DEFAULT_ROUNDS} with --default or --full, else 1)")
    run.add_argument("--node-warmup", type=float, default=5.0, metavar="SECONDS",
                     help="before a workload's first run, load the node with it for at least SECONDS and until "
                          "its throughput stops climbing (0: no node warm-up; default 5)")
    run.add_argument("--node-warmup-max", type=float, default=30.0, metavar="SECONDS",
                     help="the longest node warm-up per workload (default 30)")
    run.add_argument("--client-warmup", type=int, default=500, metavar="OPS",
                     help="operations of the run's own pattern each run's client makes before it is "
                          "measured (default 500)")
    run.add_argument("--recheck-first", action="store_true",
                     help="run the first combination once more after all the others and print both "
                          "(the warm-up check: they agree when the warm-up did its job)")
    add_service_commands(sub)
    return parser


def _timeout(text: str) -> float | None:
    """``--request-timeout``: ``none`` or a positive number of seconds."""
    if text.strip().lower() == "none":
        return None
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected none or seconds, not {text!r}") from None
    if not seconds > 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"a timeout must be a positive number of seconds, not {text!r}")
    return seconds


def add_service_commands(sub: Any) -> None:
    """``attach`` and ``record``: a program of your own, not the harness's patterns."""
    attach = sub.add_parser("attach", help="sample a running process that uses the driver (py-spy, by PID)")
    attach.add_argument("--pid", type=int, required=True, help="the process to sample")
    attach.add_argument("--duration", type=float, required=True, help="seconds to sample")
    attach.add_argument("--native", action="store_true",
                        help="py-spy --native: the driver's compiled decoding shows (as deserialization), "
                             "but py-spy pauses the service for every sample")
    record = sub.add_parser("record", help="run COMMAND and profile its client CPU (instrumented + sampled)",
                            usage="python -m profiling record [options] -- COMMAND ...")
    record.add_argument("--no-instrument", action="store_true",
                        help="py-spy only: leave every Session of the program as it is")
    record.add_argument("--cprofile", action="store_true",
                        help="also cProfile the program's main thread (record.prof, for snakeviz); it slows "
                             "that thread, so take the shares from a run without it")
    for parser in (attach, record):
        parser.add_argument("--rate", type=int, default=200, help="py-spy samples per second (default 200)")
        parser.add_argument("--row-factory", action="append", metavar="NAME",
                            help="the name of your own row factory if it does not end in 'factory' "
                                 "(repeatable; module:function or a function name)")
        parser.add_argument("--out", help="output folder (default profiles/<timestamp>)")
    record.add_argument("command_line", nargs=argparse.REMAINDER, metavar="COMMAND ...")


def chosen_set(args: argparse.Namespace) -> tuple[list[str], list[str], int, int, str]:
    """(patterns, factories, ops, rounds, profiler) of ``--default``, ``--full`` or another selection,
    before the flags that override them."""
    usable = [*factories.available(), *factories.CONFIGURATIONS]
    if args.default:
        return (DEFAULT_PATTERNS, [f for f in DEFAULT_FACTORIES if f in usable], DEFAULT_OPS, DEFAULT_ROUNDS,
                DEFAULT_PROFILER)
    if args.full:
        return FULL_PATTERNS, [f for f in FULL_FACTORIES if f in usable], FULL_OPS, FULL_ROUNDS, FULL_PROFILER
    return list(PATTERNS), [factories.REFERENCE], OTHER_OPS, OTHER_ROUNDS, OTHER_PROFILER


def options(args: argparse.Namespace, argv: list[str]) -> Options:
    set_patterns, set_factories, ops, rounds, profiler = chosen_set(args)
    patterns = args.pattern or set_patterns
    typed = args.factory or set_factories
    args.repeat = rounds if args.repeat is None else args.repeat
    # an unknown name or a broken module:function fails here, before any run
    chosen = [factories.resolve(name).name for name in typed]
    reactor = args.connection_class or client.default_reactor()
    problem = client.connection_problem(reactor, args.connection)
    if problem:
        raise ValueError(problem)
    kinds = ["read"] if args.read else ["write"] if args.write else ["read", "write"]
    for value, flag in ((args.threads, "--threads"), (args.concurrency, "--concurrency"),
                        (args.processes, "--processes"), (args.repeat, "--repeat")):
        if value < 1:
            raise ValueError(f"{flag} must be at least 1")
    for number, flag in ((args.node_warmup, "--node-warmup"), (args.node_warmup_max, "--node-warmup-max"),
                         (args.client_warmup, "--client-warmup")):
        if number < 0:
            raise ValueError(f"{flag} must not be negative")
    return Options(
        patterns=list(dict.fromkeys(patterns)), factories=list(dict.fromkeys(chosen)), kinds=kinds,
        num_ops=args.num_ops or ops, threads=args.threads,
        concurrency=args.concurrency, processes=args.processes, retries=args.retries,
        num_columns=args.num_columns, column_type=args.column_type, rows_per_query=args.rows_per_query,
        hosts=[h.strip() for h in (args.hosts or "").split(",") if h.strip()], port=args.port,
        connection_class=reactor, connection=args.connection, protocol_version=args.protocol_version, keyspace=args.keyspace,
        statement=args.statement, request_timeout=args.request_timeout,
        instrumentation=args.instrumentation == "on",
        keep_data=args.keep_data, profiler=args.profiler or profiler, rate=args.rate, native=args.native,
        cprofile_ops=args.cprofile_ops, repeat=args.repeat, warmup_s=args.node_warmup,
        warmup_max_s=args.node_warmup_max, warmup=args.client_warmup, recheck_first=args.recheck_first,
        out=args.out or f"profiles/{time.strftime('%Y%m%d-%H%M%S')}",
        command="python -m profiling " + shlex.join(argv))


def list_choices() -> None:
    print("patterns:")
    for p in PATTERNS.values():
        print(f"  {p.name:24} {p.summary}")
    print("factories (by name or alias; usable in this build: " + ", ".join(factories.available()) + "):")
    print(factories.describe())
    print("column types:\n  " + ", ".join([*COLUMN_TYPES, "mixed"]))
    print("connection classes:")
    for name in [*client.REACTORS, *client.REFUSED]:
        problem = client.reactor_problem(name)
        print(f"  {name:10} {'available' if problem is None else problem}")
    print("connections (--connection, with the default reactor " + client.default_reactor() + "):")
    for name in client.CONNECTIONS:
        problem = client.connection_problem(client.default_reactor(), name)
        print(f"  {name:12} {'available' if problem is None else problem}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    if args.command == "list":
        list_choices()
        return 0
    if args.command in ("attach", "record"):
        return service_command(args, argv)
    try:
        opts = options(args, argv)
    except ValueError as exc:
        print(f"python -m profiling: error: {exc}", file=sys.stderr)
        return 2
    return run_session(opts)


def service_command(args: argparse.Namespace, argv: list[str]) -> int:
    from .service.attach import run_attach
    from .service.record import run_record
    from .service.results import ServiceError

    args.out = args.out or f"profiles/{time.strftime('%Y%m%d-%H%M%S')}"
    if args.rate < 1:
        print("python -m profiling: error: --rate must be at least 1", file=sys.stderr)
        return 2
    shown = "python -m profiling " + shlex.join(argv)
    try:
        return (run_attach if args.command == "attach" else run_record)(args, shown)
    except ServiceError as exc:
        print(f"python -m profiling {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
