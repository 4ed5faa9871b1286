"""Instructions per query under callgrind: a steadier measure than CPU time where per-round ratios spread.

    python -m benchmarks.instructions --workload pages --factories tuple,fastpath_class --queries 40,120
    python -m benchmarks.instructions --workload insert1000 --factories fastpath_named+conn --queries 2000,6000
    python -m benchmarks.instructions --asyncio --workload single50 --factories everything_on+await,acsylla --queries 2000,8000
    python -m benchmarks.instructions --syscalls --workload single50 --factories fastpath_named+conn --queries 2000,8000

For each configuration (a factory, or a factory on our connection: ``<factory>+conn``, as in
``benchmarks.bench_e2e``), the client runs the end-to-end workload (``benchmarks.e2e.workloads``) twice under
``valgrind --tool=callgrind`` (``benchmarks.harness.callgrind``), once with each number of queries after the
same warm-up; the instructions per query are the difference of the two runs' totals (all threads: the
caller and the driver's event loop) over the difference in queries, so start-up, connecting, preparing
and warming up cancel out. Instructions do not depend on what else runs on the machine; they count work, not
time (cache misses and waits are not in them). Each factory's figure is printed as a ratio to
``tuple_factory``'s (with ``--asyncio``, to the driver's with the usual bridge), with ``--json`` for the record.

With ``--syscalls`` the same two runs are made under ``strace -f -c`` instead (``benchmarks.harness.syscalls``):
the system calls per query, in all and for each call, the same difference of two runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from .harness import callgrind, syscalls

WARMUP_QUERIES = 20
ASYNCIO = "asyncio:"  # what the child is told before an asyncio configuration's name


def child(argv: Sequence[str]) -> int:
    """In the process callgrind runs: connect (our connection for a ``+conn`` configuration), apply
    the factory, warm up, run the queries, exit. An asyncio configuration runs its own client
    (``benchmarks.e2e.asyncio_clients``) on a loop of its own."""
    from profiling.factories import BY_NAME

    from .e2e.clients import DriverClient
    from .e2e.configs import parse

    workload, name, queries, hosts, port = argv
    if name.startswith(ASYNCIO):
        from .e2e.asyncio_clients import make_client

        aio_client = make_client(name[len(ASYNCIO):], hosts.split(","), int(port))
        try:
            aio_client.measure(workload, None, WARMUP_QUERIES)
            aio_client.measure(workload, None, int(queries))
        finally:
            aio_client.close()
        return 0
    config = parse(name, list(BY_NAME))
    if config.peer:
        raise SystemExit(f"{name}: a peer is counted through its asyncio client (--asyncio), not here")
    client = DriverClient.connect(hosts.split(","), int(port), ours=config.connection == "ours")
    try:
        client.measure(workload, config.factory, WARMUP_QUERIES)
        client.measure(workload, config.factory, int(queries))
    finally:
        client.close()
    return 0


def instructions(workload: str, factory: str, queries: int, hosts: str, port: int) -> int:
    """Total instructions of one client run under callgrind (all threads)."""
    module = __spec__.name if __spec__ else "benchmarks.instructions"
    return callgrind.total(["-m", module, "--child", workload, factory, str(queries), hosts, str(port)], factory)


def syscall_counts(workload: str, factory: str, queries: int, hosts: str, port: int) -> dict[str, int]:
    """System calls by name of one client run under strace (all threads)."""
    module = __spec__.name if __spec__ else "benchmarks.instructions"
    return syscalls.counts(["-m", module, "--child", workload, factory, str(queries), hosts, str(port)], factory)


def _count(args: Any, name: str, lengths: list[int], hosts: str, port: int) -> dict[str, Any]:
    """One configuration's two runs: ``per_query`` (instructions, or all system calls), and their totals."""
    if not args.syscalls:
        totals = {n: instructions(args.workload, name, n, hosts, port) for n in lengths}
        return {"totals": {str(n): t for n, t in totals.items()}, "per_query": callgrind.per_query(totals)}
    runs = {n: syscall_counts(args.workload, name, n, hosts, port) for n in lengths}
    by_call = syscalls.per_query(runs)
    return {"counts": {str(n): c for n, c in runs.items()}, "per_query": sum(by_call.values()),
            "by_call": {call: round(v, 4) for call, v in sorted(by_call.items(), key=lambda kv: -kv[1])
                        if abs(v) >= 0.005}}


def _largest(by_call: dict[str, float], n: int = 4) -> str:
    return ", ".join(f"{call} {v:.2f}" for call, v in list(by_call.items())[:n])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        return child(argv[1:])
    ap = argparse.ArgumentParser(prog="python -m benchmarks.instructions", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="pages", help="an end-to-end workload (benchmarks.e2e.workloads)")
    ap.add_argument("--factories", default="tuple,fastpath_named,fastpath_class",
                    help="comma-separated configurations: factory names, or <factory>+conn for our connection "
                         "(tuple is always included, as the reference)")
    ap.add_argument("--queries", default="40,120", help="the two run lengths, in queries")
    ap.add_argument("--hosts", help="comma-separated contact points (default: the local node)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--syscalls", action="store_true",
                    help="count system calls under strace -f -c instead of instructions under callgrind")
    ap.add_argument("--asyncio", action="store_true",
                    help="--factories names asyncio configurations (benchmarks.bench_asyncio's, acsylla's among them; "
                         "driver+bridge is the reference)")
    args = ap.parse_args(argv)
    from profiling.cluster import reach
    from profiling.factories import REFERENCE

    lengths = sorted({int(q) for q in args.queries.split(",")})
    if len(lengths) != 2:
        raise SystemExit("--queries takes two different run lengths")
    prefix, reference = "", REFERENCE
    if args.asyncio:
        from .e2e import asyncio_clients

        configs, reference = asyncio_clients.CONFIGS, asyncio_clients.REFERENCE
        unknown = [f for f in args.factories.split(",") if f and f not in configs]
        if unknown:
            raise SystemExit(f"not asyncio configurations: {', '.join(unknown)} (they are: {', '.join(configs)})")
        prefix = ASYNCIO
    names = [reference] + [f for f in args.factories.split(",") if f and f != reference]
    results: dict[str, Any] = {}
    unit = "system calls" if args.syscalls else "instructions"
    with reach(args.hosts) as contact:
        hosts = ",".join(contact.hosts)
        for name in names:
            results[name] = _count(args, prefix + name, lengths, hosts, contact.port)
            per = results[name]["per_query"]
            print(f"{name}: {per:,.2f} {unit} per query" if args.syscalls
                  else f"{name}: {per:,.0f} {unit} per query", flush=True)
    ref = results[reference]["per_query"]
    extra = " | the most frequent, per query" if args.syscalls else ""
    print(f"\n| configuration | {unit} per query ({args.workload}) | vs. {reference}{extra} |\n"
          f"|---|--:|--:|{'---|' if args.syscalls else ''}")
    for name, r in results.items():
        r["ratio"] = r["per_query"] / ref if ref else None  # (a reference that made no call: no ratio)
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.3f}x"
        if args.syscalls:
            print(f"| {name} | {r['per_query']:,.2f} | {ratio} | {_largest(r['by_call'])} |")
        else:
            print(f"| {name} | {r['per_query']:,.0f} | {ratio} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"workload": args.workload, "queries": lengths, "counted": unit, "results": results}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
