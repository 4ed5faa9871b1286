"""End to end from an asyncio application: client CPU per query and throughput of requests awaited on a
loop, through the driver's callbacks bridged into asyncio futures, awaited directly, and through a peer.

    python -m benchmarks.bench_asyncio [--size quick|full|tiny] [--loop asyncio|uvloop] [--json PATH]
                                       [--client-cpus 1 --server-cpus 0] [--configs a,b] [--workloads a,b]

Configurations (``benchmarks.e2e.asyncio_clients``; rows as tuples in all, each client a process of
its own with its own loop):

* ``driver+bridge`` (the reference): the driver's ``tuple_factory`` on its default libev connection,
  ``execute_async`` + ``add_callbacks`` + ``loop.call_soon_threadsafe`` into an asyncio future;
* ``everything_on+bridge``: ``pyfactories.enable(cluster)`` before ``connect()``, the same bridge;
* ``everything_on+await``: the same, ``await session.execute_async(...)`` (left out with a note where
  the futures an enabled session hands out cannot be awaited);
* ``acsylla``: its asyncio API (left out with a note where it does not import).

Workloads (``benchmarks.e2e.workloads``): ``single`` (1-row SELECTs of 10 int columns, one awaited at a
time), ``single50`` (the same, 50 coroutines in flight), ``pages`` (200-row pages, 50 in flight),
``insert1`` and ``insert50`` (prepared 10-column INSERTs, 1 and 50 in flight).

Method: that of ``bench_e2e`` (its ``bench_workload``): the node warmed up with each workload's queries,
every configuration once, then interleaved rounds (order rotated), the same number of queries per
configuration and round; client CPU per query = the client process's CPU time (all threads: the loop's
and the driver's IO thread) over its queries; ratios = median of per-round ratios to ``driver+bridge``,
with their range. ``--size full`` pins client and server apart (the reference configuration:
``--client-cpus 1 --server-cpus 0`` on two CPUs) over 21 rounds.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import asdict
from typing import Any, Sequence

from profiling.cluster import Contact

from . import bench_e2e
from .e2e import asyncio_clients, clients as e2e_clients, reference
from .e2e.asyncio_clients import CONFIGS, DEFAULT_WORKLOADS, LOOPS, REFERENCE
from .e2e.workloads import WORKLOADS
from .harness import cli
from .reporting.tables import markdown_table

DEPTH = "asyncio"
TITLE = "End to end, asyncio"
SIZES: dict[str, dict[str, Any]] = {
    "quick": {"rounds": 5, "round_s": 0.15, "warmup_s": 2.0},
    "full": {"rounds": reference.MIN_ROUNDS, "round_s": 0.5, "warmup_s": 3.0, "reference": True},
    "tiny": {"rounds": 3, "round_s": 0.02, "warmup_s": 0.0},
}
METHOD = ("each configuration a client process of its own with its own loop, taking turns round by round "
          "(order rotated) after the node's warm-up and one segment each; client CPU per query = "
          "time.process_time() delta of that process (all threads) / queries; throughput = queries / wall "
          "second; medians over rounds; ratios = median of per-round ratios to driver+bridge, with their range")


def default_spec(size: str = "quick") -> dict[str, Any]:
    """A run of that size, every configuration and workload, the standard loop; ``full`` pins client and
    server apart as the reference configuration does, when this machine has two CPUs for it."""
    spec = {**SIZES[size], "size": size, "loop": "asyncio", "workloads": list(DEFAULT_WORKLOADS),
            "configs": list(CONFIGS)}
    if spec.get("reference") and (pair := reference.cpus()):
        spec["client_cpus"], spec["server_cpus"] = pair
    return spec


def run(spec: dict[str, Any], contact: Contact, say=print) -> dict[str, Any]:
    """The ``asyncio`` section: the configurations that can run here, measured on the node."""
    configs, notes = asyncio_clients.usable(asyncio_clients.resolve_all(spec.get("configs")))
    for note in notes:
        say(f"asyncio: {note}")
    unavailable: dict[str, str] = {}

    def clients_of(_session: Any, client_cpus: list[int] | None) -> dict[str, Any]:
        make = functools.partial(asyncio_clients.make_client, loop=spec["loop"])
        remotes = e2e_clients.start([c.connection for c in configs], list(contact.hosts), contact.port,
                                    client_cpus, make)
        for name, remote in list(remotes.items()):
            if remote.unavailable:  # known once its process has connected and tried
                unavailable[name] = remote.unavailable
                remotes.pop(name).close()
        return remotes

    spec, cases, node, described = bench_e2e.measure_on_node(spec, contact, configs, clients_of, say)
    notes += [f"`{name}` unavailable: {why}" for name, why in unavailable.items()]
    measured = [c for c in configs if c.name in described]
    return {
        "depth": DEPTH,
        "config": {**spec, "configs": [c.name for c in measured]},
        "cassandra": node["cassandra"],
        "configurations": {c.name: {"words": c.words, "enabled": c.enabled, "how": c.how,
                                    "client": described[c.name]} for c in measured},
        "unavailable": unavailable,
        "notes": notes,
        "method": METHOD,
        "reference": reference.problem(spec) is None,
        "workloads": {wid: asdict(WORKLOADS[wid]) for wid in spec["workloads"]},
        "cases": cases,
    }


def table_rows(cases: Sequence[dict[str, Any]]) -> list[list[str]]:
    """A row per workload and configuration: in flight, CPU/query, queries/s, and their ratios to the
    reference (with the range of the per-round ratios)."""
    rows = []
    for case in cases:
        for name, r in case["results"].items():
            rows.append([case["id"], str(case["in_flight"]), name, f"{r['cpu_us_per_query']:.1f} µs",
                         f"{r['qps']:.0f}", reference.with_range(r["cpu_ratio"], r.get("cpu_ratio_range")),
                         reference.with_range(r["qps_ratio"], r.get("qps_ratio_range"))])
    return rows


def render(section: dict[str, Any]) -> str:
    cases = section.get("cases") or []
    notes = [f"Note: {note}." for note in section.get("notes") or []]
    if not cases:
        return "\n".join([f"### {TITLE}", "", "Not run: no workloads.", "", *notes]) + "\n"
    cfg, cas = section["config"], section["cassandra"]
    header = ["workload", "in flight", "configuration", "CPU/query", "queries/s", f"CPU vs. {REFERENCE}",
              f"queries/s vs. {REFERENCE}"]
    described = section.get("configurations") or {}
    return "\n".join([
        f"### {TITLE} (Cassandra {cas['version']}, protocol v{cas['protocol_version']}; {cfg['loop']} loop; "
        f"{cfg['rounds']} interleaved rounds, medians{reference.pinning_words(cfg)})",
        "",
        markdown_table(header, table_rows(cases)),
        "",
        "Ratios: median of per-round ratios to `driver+bridge` in the same round (their range); CPU: lower is "
        "better, queries/s: higher is better.",
        "",
        "Configurations: " + "; ".join(f"`{name}` = {d['words']} ({d['client']})" for name, d in described.items())
        + ".",
        "",
        "Workloads: " + "; ".join(f"`{c['id']}` = {c['description']} ({c['queries_per_round']} queries per "
                                  "configuration and round)" for c in cases) + ".",
        "",
        *notes,
    ]).rstrip() + "\n"


def parse_args(argv: Sequence[str] | None = None) -> tuple[Any, dict[str, Any]]:
    """The command line's options, and the run's spec from them (its configurations and loop checked)."""
    ap = cli.bench_parser("benchmarks.bench_asyncio", __doc__, SIZES)
    ap.add_argument("--configs", help=f"comma-separated, of: {', '.join(CONFIGS)} ({REFERENCE} is always included)")
    ap.add_argument("--workloads", help=f"comma-separated, of: {', '.join(WORKLOADS)} "
                                        f"(default: {', '.join(DEFAULT_WORKLOADS)})")
    ap.add_argument("--loop", choices=LOOPS, default="asyncio", help="the clients' event loop")
    cli.add_node_options(ap, "configuration")
    args = ap.parse_args(argv)
    spec = cli.with_node_options(ap, args, default_spec(args.size))
    if args.configs:
        try:
            spec["configs"] = [c.name for c in asyncio_clients.resolve_all(args.configs.split(","))]
        except ValueError as exc:
            ap.error(str(exc))
    if args.workloads:
        spec["workloads"] = bench_e2e.workloads_named(ap, args.workloads)
    if why := asyncio_clients.loop_unavailable(args.loop):
        ap.error(why)
    spec["loop"] = args.loop
    return args, spec


def main(argv: Sequence[str] | None = None) -> int:
    return cli.main_against_node(argv, parse_args, run, render)


if __name__ == "__main__":
    sys.exit(main())
