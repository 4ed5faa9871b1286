"""The command line every ``python -m benchmarks.bench_x`` shares."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Iterable, Sequence

from .environment import environment
from .pinning import parse_cpus
from ..reporting.results_json import SCHEMA_VERSION, write_json


def bench_parser(module: str, doc: str | None, sizes: Iterable[str], offline: bool = False
                 ) -> argparse.ArgumentParser:
    """The options every ``python -m benchmarks.bench_x`` shares: ``--size`` and ``--json``; with
    ``offline`` also those of the depths run in worker processes (no server)."""
    ap = argparse.ArgumentParser(prog=f"python -m {module}", description=(doc or "").split("\n\n")[0])
    ap.add_argument("--size", choices=sorted(sizes), default="quick")
    ap.add_argument("--json", metavar="PATH", help="write the results (with the environment) here")
    if offline:
        ap.add_argument("--processes", type=int, help="worker processes (default: by size)")
        ap.add_argument("--rounds", type=int, help="rounds per process (default: by size)")
        ap.add_argument("--no-python", action="store_true", help="leave out the pure-Python twins")
    return ap


def apply_overrides(spec: dict, processes: int | None, rounds: int | None) -> dict:
    """``--processes``/``--rounds`` from the command line, over the size's defaults."""
    if processes:
        spec["processes"] = processes
    if rounds:
        spec["rounds"] = rounds
    return spec


def print_and_save(section: dict[str, Any], render: Callable[[dict[str, Any]], str], json_path: str | None) -> None:
    """Print a bench's table, and write its section (under its depth's key) with the environment
    to ``json_path`` if given."""
    print()
    print(render(section))
    if json_path:
        path = write_json(json_path, {"schema": SCHEMA_VERSION, "env": environment(), section["depth"]: section})
        print(f"\nJSON: {path}")


def add_node_options(ap: argparse.ArgumentParser, segment: str) -> None:
    """The options of a bench that runs against a node: where it is, the rounds (``segment``: what takes
    turns in them), the node's warm-up, and the pinning of client and server."""
    ap.add_argument("--hosts", help="comma-separated contact points of your own cluster (nothing is started)")
    ap.add_argument("--port", type=int, help="CQL port (default 9042 or PYFACTORIES_PORT)")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--round-seconds", type=float, help=f"approximate length of one {segment}'s segment")
    ap.add_argument("--warmup-seconds", type=float, metavar="S",
                    help="the node warm-up per workload: at least S seconds, until throughput stops climbing")
    ap.add_argument("--client-cpus", type=parse_cpus, metavar="LIST",
                    help="pin the client (and the driver's event-loop thread) to these CPUs, e.g. 1 or 0-1")
    ap.add_argument("--server-cpus", type=parse_cpus, metavar="LIST",
                    help="pin the local Cassandra node(s) to these CPUs for the run (restored after)")
    ap.add_argument("--server-pid", type=int, action="append", metavar="PID",
                    help="the PID of a node on this machine that the project did not start (repeatable), "
                         "for --server-cpus")


def with_node_options(ap: argparse.ArgumentParser, args: Any, spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with the values :func:`add_node_options`' options were given; an error when
    ``--server-cpus`` is asked of servers that ``--hosts`` names and no ``--server-pid`` does."""
    if args.hosts and args.server_cpus and not args.server_pid:
        ap.error("--server-cpus pins the local node; it cannot pin the servers named by --hosts "
                 "(unless --server-pid names them)")
    for key, value in (("rounds", args.rounds), ("round_s", args.round_seconds), ("warmup_s", args.warmup_seconds),
                       ("client_cpus", args.client_cpus), ("server_cpus", args.server_cpus),
                       ("server_pids", args.server_pid)):
        if value is not None:
            spec[key] = value
    return spec


def main_against_node(argv: Sequence[str] | None, parse_args: Callable[..., tuple[Any, dict[str, Any]]],
                      run: Callable[..., dict[str, Any]], render: Callable[[dict[str, Any]], str]) -> int:
    """A bench's command line that runs against a node (``--hosts``, else the local one, started if need
    be): its spec from ``parse_args``, ``run(spec, contact)``, its table printed and its JSON saved."""
    from profiling.cluster import reach

    args, spec = parse_args(argv)
    if spec["rounds"] < 5:
        print("note: fewer than 5 rounds; the project's method asks for at least 5", file=sys.stderr)
    with reach(args.hosts, args.port) as contact:
        section = run(spec, contact)
    print_and_save(section, render, args.json)
    return 0
