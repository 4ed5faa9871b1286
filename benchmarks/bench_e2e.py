"""End-to-end benchmark: real queries against Cassandra, client CPU per query and throughput.

    python -m benchmarks.bench_e2e [--size quick|full|connection] [--json PATH] [--hosts h1,h2]

Workloads (tables in ``benchmarks/data/dataset.py``; all prepared statements, run the
way an application runs them, by the profiler's execution patterns,
``profiling.harness.patterns``):

* ``single``: many small sequential SELECTs of one row over 10 columns, keys
  drawn at random from 10,000 rows (the "Avoid namedtuple" select workload);
* ``pages``: pages of 200 rows x 10 columns, 50 requests in flight;
* ``wide``: sequential SELECTs of one row of 50 columns;
* ``coll``: pages of 200 rows x 10 columns, 6 of them collections/tuples, 50 in flight;
* ``wide_pages`` (full size only): pages of 200 rows x 50 columns, 50 in flight;
* ``single50``: 1-row SELECTs of ``narrow``, 50 in flight, with the driver's default request timeout (10 s);
* ``insert1``, ``insert50``, ``insert1000``: prepared INSERTs of 10 columns into the connection benchmarks'
  table (``timers_bench.inserts``, its rows), 1, 50 and 1,000 in flight, the driver's default timeout.

Configurations (``benchmarks.e2e.configs``): a factory on the driver's connection (``tuple``,
``fastpath_named``), a factory on our connection (``fastpath_named+conn``: ``Cluster(...,
**connection.cluster_options())``; ``--connections driver,ours`` adds one for every factory named),
and peer drivers (``acsylla``, through its asyncio API, rows as tuples; left out with a note when it
does not import, and on the workloads it does not run); ``--size connection`` measures the
connection's targets that way (pinned, 21 rounds). The connection class is per cluster, so
when a run has more than the driver's connection every connection gets a client process of its own
(``benchmarks.e2e.clients``), the driver's too; they take turns in the same interleaved rounds.

The same workloads awaited from an asyncio application (the driver through a hand-written bridge,
an enabled session, awaited futures, a peer's asyncio API): ``benchmarks.bench_asyncio``.

Sequential workloads run the ``sync`` pattern (one request at a time), the
others ``callback_full_pipeline`` with as many callback chains as requests in
flight. Method: one session; first the node is warmed up with the workload's
own queries until its throughput stops climbing (``profiling.harness.warmup``: on a
fresh node the first factory measured would otherwise absorb the node's JIT
warm-up), then every factory warms up once; then every factory is applied to
the session in turn (``profiling.factories``), round by round (A B C ..., the
order rotated each round), the same number of queries per factory and round.
Client CPU is the process CPU time of the measuring process (all threads: the
caller and the driver's event loop) divided by the queries;
throughput is queries per wall-clock second. Each factory's figure is the
median over rounds; its ratio to ``tuple_factory`` is the median of the
per-round ratios (each taken against the ``tuple`` segment of the same round),
so slow drifts of a shared machine cancel out; the range of the per-round
ratios is shown beside it.

The targets are judged only in the reference configuration
(``benchmarks.e2e.reference``: client and server pinned apart, at least 21
rounds), which ``--size full`` (``make bench``) measures, followed by an
unpinned pass shown beside it and not judged; other runs' verdicts are
indicative (``~PASS``/``~MISS``).
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import asdict
from typing import Any, Callable, Iterator, Sequence, TypeVar

from profiling.cluster import Contact, connect
from profiling.factories import REFERENCE, for_sessions, resolve
from profiling.harness.warmup import IN_FLIGHT, warm_with

from .data import dataset
from .e2e import clients as e2e_clients, configs as e2e_configs, reference
from .e2e.clients import Client, DriverClient
from .e2e.configs import Config
from .e2e.workloads import WORKLOADS, QueriesFailed, Runner, Workload
from .harness import cli, depths
from .harness.stats import paired_ratio
from .reporting import chart, targets
from .reporting.tables import fmt_ratio, markdown_table

THIS = depths.BY_NAME["e2e"]
T = TypeVar("T")


SIZES: dict[str, dict[str, Any]] = {
    "quick": {"rounds": 5, "round_s": 0.15, "warmup_s": 2.0, "workloads": ["single", "pages", "wide", "coll"]},
    # the reference configuration (pinned apart, see default_spec), then an unpinned pass beside it
    "full": {"rounds": reference.MIN_ROUNDS, "round_s": 0.5, "warmup_s": 3.0, "reference": True,
             "unpinned": {"rounds": 9}, "workloads": ["single", "pages", "wide", "coll", "wide_pages"]},
    "tiny": {"rounds": 5, "round_s": 0.02, "warmup_s": 0.5, "workloads": ["single", "pages"]},
    # our connection's targets, pinned as the reference configuration asks, beside a peer driver
    "connection": {"rounds": reference.MIN_ROUNDS, "round_s": 0.5, "warmup_s": 3.0, "reference": True,
                   "workloads": ["single", "single50", "insert50", "insert1000", "pages"],
                   "factories": ["tuple", "fastpath_named", "tuple+conn", "fastpath_named+conn", "fastpath_dict+conn",
                                 "acsylla"]},
}
WARMUP_MAX_S = 30.0  # the longest node warm-up per workload
WARMUP_QUERIES = 50  # per factory (and again for tuple, to size the rounds)
ROUND_ATTEMPTS = 3  # a round in which the node failed queries is measured again, at most this often


def bench_workload(session, w: Workload, factories: Sequence[str], rounds: int, round_s: float,
                   say=print, warmup_s: float = 0.0, clients: dict[str, Client] | None = None,
                   configs: Sequence[Config] | None = None) -> dict[str, Any]:
    """Interleaved rounds of ``w`` over ``configs`` (by default ``factories`` on the driver's connection),
    each through the client of its connection (by default ``session``, in this process)."""
    configs = [c for c in (configs or [Config(f, f, "driver") for f in factories]) if c.runs(w.id)]
    clients = clients or {"driver": DriverClient(session)}

    def measure(cfg: Config, n: int) -> tuple[float, float]:
        return clients[cfg.connection].measure(w.id, cfg.factory, n)

    redone: list[str] = []

    def again(step: Callable[[], T], what: str) -> T:
        """``step``, measured again (all of it: a whole round) when the node failed some of its queries."""
        for attempt in range(ROUND_ATTEMPTS):
            try:
                return step()
            except QueriesFailed as exc:  # e.g. a write timeout on a node that could not keep up
                if attempt == ROUND_ATTEMPTS - 1:
                    raise
                redone.append(f"{what}: {exc}")
                say(f"  {w.id}: {what} measured again: {exc}")
        raise AssertionError("unreachable")

    warmed = None
    if warmup_s > 0:  # the node first, with this workload's queries, until its throughput stops climbing
        for ddl in w.schema:
            session.execute(ddl, timeout=60.0)
        resolve(REFERENCE).apply(session)
        warmed = warm_with(session, Runner(session, w).request, warmup_s, max(warmup_s, WARMUP_MAX_S),
                           in_flight=min(IN_FLIGHT, max(8, w.in_flight)))
        say(f"  {w.id}: node warm-up {warmed.describe()}")
    # then every configuration once (fills caches, prepares, settles the connection)
    warm = max(WARMUP_QUERIES, w.in_flight)
    for cfg in configs:
        again(lambda: measure(cfg, warm), f"{cfg.name}'s warm-up")
    # queries per round so that a segment of the reference lasts about round_s
    probe = max(WARMUP_QUERIES, 2 * w.in_flight) if w.in_flight > 1 else WARMUP_QUERIES
    _, wall = again(lambda: measure(configs[0], probe), "the probe")
    n = max(20, w.in_flight, round(round_s * probe / max(wall, 1e-6)))
    say(f"  {w.id}: {n} queries x {len(configs)} configurations x {rounds} rounds (~{n * wall / probe:.2f} s each)")
    cpu: dict[str, list[float]] = {c.name: [] for c in configs}
    wall_s: dict[str, list[float]] = {c.name: [] for c in configs}
    for r in range(rounds):
        k = r % len(configs)
        order = configs[k:] + configs[:k]
        segments = again(lambda: [(cfg.name, *measure(cfg, n)) for cfg in order], f"round {r + 1}")
        for name, c, wl in segments:
            cpu[name].append(c / n)
            wall_s[name].append(wl / n)
    if session is not None:
        resolve(REFERENCE).apply(session)
    base = configs[0].name
    results = {}
    for name in cpu:
        qps = [1.0 / x for x in wall_s[name]]
        base_qps = [1.0 / x for x in wall_s[base]]
        per_round = [a / b for a, b in zip(cpu[name], cpu[base]) if b]
        qps_round = [a / b for a, b in zip(qps, base_qps) if b]
        results[name] = {
            "cpu_us_per_query": statistics.median(cpu[name]) * 1e6,
            "qps": statistics.median(qps),
            "cpu_ratio": paired_ratio(cpu[name], cpu[base]),
            "qps_ratio": paired_ratio(qps, base_qps),
            "cpu_ratio_range": [min(per_round), max(per_round)] if per_round else None,
            "qps_ratio_range": [min(qps_round), max(qps_round)] if qps_round else None,
            "cpu_us_rounds": [x * 1e6 for x in cpu[name]],
            "qps_rounds": qps,
        }
    return {"id": w.id, "description": w.description, "query": w.query, "rows": w.rows, "cols": w.cols,
            "in_flight": w.in_flight, "fetch_size": w.fetch_size, "request_timeout": w.request_timeout,
            "queries_per_round": n, "rounds": rounds, "rounds_redone": redone,
            "node_warmup": warmed.record() if warmed else None, "results": results}


def default_spec(size: str = "quick") -> dict[str, Any]:
    """A run of that size; ``full`` pins client and server apart as the reference configuration
    does (``benchmarks.e2e.reference``) when this machine has two CPUs for it."""
    cfg = dict(SIZES[size])
    cfg["size"] = size
    if cfg.get("reference") and reference.cpus():
        cfg["client_cpus"], cfg["server_cpus"] = reference.cpus()
    return cfg


def configurations(only: Sequence[str] | None = None, connections: Sequence[str] = ("driver",)) -> list[Config]:
    """What a run measures (``benchmarks.e2e.configs``): the reference first, then ``only`` (factories,
    ``<factory>+conn``, peers; by default every usable factory), each also on our connection when
    ``connections`` names "ours"."""
    usable = for_sessions()
    return e2e_configs.resolve_all(only or usable, usable, connections)


def run(spec: dict[str, Any], contact: Contact, say=print) -> dict[str, Any]:
    """The ``e2e`` section: :func:`run_pass` of ``spec``, and with ``spec["unpinned"]`` (``--size full``)
    a second pass, unpinned, under the section's ``unpinned`` (shown, not judged)."""
    section = run_pass({k: v for k, v in spec.items() if k != "unpinned"}, contact, say)
    if spec.get("unpinned"):
        say("end to end, unpinned (beside the reference figures, not judged):")
        plain = {k: v for k, v in spec.items() if k not in ("unpinned", "reference", "client_cpus", "server_cpus")}
        side = run_pass({**plain, **spec["unpinned"]}, contact, say)
        side["verdicts"] = []
        section["unpinned"] = side
    return section


def measure_on_node(spec: dict[str, Any], contact: Contact, configs: Sequence[Any],
                    clients_of: Callable[[Any, list[int] | None], dict[str, Client]], say=print
                    ) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any], dict[str, str]]:
    """Pinned as ``spec`` says (``reference.pinned_apart``): connect, make sure the data set is there,
    take the clients ``clients_of(session, client_cpus)`` gives (by connection; closed after), and run
    ``spec["workloads"]`` over the ``configs`` that have a client. Returns the spec as pinned, the cases,
    the node's facts and each client's description."""
    with reference.pinned_apart(spec, contact, say) as spec:
        # the driver's event-loop thread inherits the pinning
        cluster, session = connect(contact, **dataset.CONNECT_OPTIONS)
        try:
            version = dataset.cassandra_version(session)
            say(f"end to end: Cassandra {version} at {', '.join(contact.hosts)}:{contact.port}, "
                f"protocol v{cluster.protocol_version}, {len(configs)} configurations")
            dataset.ensure_dataset(session, say=say)
            clients = clients_of(session, spec.get("client_cpus"))
            try:
                say("end to end: " + "; ".join(f"{conn}: {client.description}" for conn, client in clients.items()))
                measured = [c for c in configs if c.connection in clients]
                cases = [bench_workload(session, WORKLOADS[wid], [], spec["rounds"], spec["round_s"], say=say,
                                        warmup_s=spec.get("warmup_s", 0.0), clients=clients, configs=measured)
                         for wid in spec["workloads"]]
            finally:
                for client in clients.values():
                    client.close()
            node = {"cassandra": {"version": version, "hosts": list(contact.hosts), "port": contact.port,
                                  "nodes": len(cluster.metadata.all_hosts()),
                                  "protocol_version": cluster.protocol_version},
                    "connection_class": cluster.connection_class.__name__}
        finally:
            cluster.shutdown()
    return spec, cases, node, {conn: client.description for conn, client in clients.items()}


def run_pass(spec: dict[str, Any], contact: Contact, say=print) -> dict[str, Any]:
    """Connect, make sure the data set is there, run the workloads (pinned as :func:`measure_on_node` says)."""
    configs, notes = e2e_configs.usable(configurations(spec.get("factories"), spec.get("connections") or ("driver",)))
    for note in notes:
        say(f"end to end: {note}")
    notes += [f"`{c.name}` does not run {', '.join(f'`{w}`' for w in skipped)}" for c in configs
              if (skipped := [w for w in spec["workloads"] if not c.runs(w)])]
    factories = [c.name for c in configs]

    def clients_of(session: Any, client_cpus: list[int] | None) -> dict[str, Client]:
        if not e2e_configs.needs_processes(configs):
            return {"driver": DriverClient(session)}
        return dict(e2e_clients.start(list(dict.fromkeys(c.connection for c in configs)),
                                      list(contact.hosts), contact.port, client_cpus))

    spec, cases, node, clients = measure_on_node(spec, contact, configs, clients_of, say)
    section = {
        "depth": THIS.key,
        "config": {**spec, "factories": factories},
        "cassandra": node["cassandra"],
        "connection_class": node["connection_class"],
        "configurations": {c.name: {"factory": c.factory, "connection": c.connection,
                                    "client": clients[c.connection]} for c in configs},
        "notes": notes,
        "method": ("node warmed up with each workload until its throughput stops climbing, then every factory "
                   "once; client CPU per query = time.process_time() delta (all threads) / queries; throughput = "
                   "queries / wall second; medians over rounds; ratios = median of per-round ratios to the "
                   "tuple segment of the same round, with their range"),
        "reference": reference.problem(spec) is None,
        "workloads": {wid: asdict(WORKLOADS[wid]) for wid in spec["workloads"]},
        "cases": cases,
    }
    section["verdicts"] = targets.as_json(verdicts(section))
    return section


def verdicts(section: dict[str, Any]) -> list[targets.Verdict]:
    return targets.end_to_end(section) if section.get("cases") else []


def figures(section: dict[str, Any], suffix: str = "") -> Iterator[depths.Figure]:
    """The section's figures, then those of its unpinned pass (their metrics named ``..., unpinned``)."""
    for c in section.get("cases", []):
        for f, r in c["results"].items():
            yield depths.Figure(c["id"], f, "CPU/query µs" + suffix, r.get("cpu_us_per_query"))
            if f != REFERENCE:
                yield depths.Figure(c["id"], f, "CPU ratio to tuple" + suffix, r.get("cpu_ratio"), headline=not suffix)
                yield depths.Figure(c["id"], f, "q/s ratio to tuple" + suffix, r.get("qps_ratio"),
                                    lower_is_better=False)
    if section.get("unpinned"):
        yield from figures(section["unpinned"], ", unpinned")


def render(section: dict[str, Any]) -> str:
    cases = section.get("cases", [])
    if not cases:
        return f"### {THIS.title}\n\nNot run: {section.get('skipped', 'no workloads')}."
    header = ["configuration", "connection"] + [f"{c['id']} ({c['rows']}x{c['cols']})" for c in cases]
    cpu_rows = e2e_configs.table_rows(section, lambda r: reference.with_range(r["cpu_ratio"], r.get("cpu_ratio_range")))
    qps_rows = e2e_configs.table_rows(section, lambda r: reference.with_range(r["qps_ratio"], r.get("qps_ratio_range")))
    abs_rows = e2e_configs.table_rows(section, lambda r: f"{r['cpu_us_per_query']:.0f} µs, {r['qps']:.0f}/s")
    cfg, cas = section["config"], section["cassandra"]
    parts = [
        f"### {THIS.title} (Cassandra {cas['version']}, {cas['nodes']} node(s), protocol v{cas['protocol_version']}; "
        f"{cfg['rounds']} interleaved rounds, medians{reference.pinning_words(cfg)})",
        "",
        "Client CPU per query relative to `tuple` (the driver's `tuple_factory` on the driver's connection; "
        "lower is better; median of per-round ratios, their range in brackets):",
        "",
        markdown_table(header, cpu_rows),
        "",
        "Throughput relative to `tuple_factory` (higher is better):",
        "",
        markdown_table(header, qps_rows),
        "",
        "Client CPU per query and queries per second (medians):",
        "",
        markdown_table(header, abs_rows),
        "",
        *_avoid_namedtuple_lines(cases),
        *connection_lines(section),
        "Workloads: " + "; ".join(f"`{c['id']}` = {c['description']} ({c['queries_per_round']} queries per "
                                  "configuration and round)" for c in cases) + ".",
        "",
        *targets.fenced("Targets (client CPU per query / tuple_factory's):", section["verdicts"]),
        "",
        *reference.unpinned_lines(section.get("unpinned") or {}),
    ]
    return "\n".join(parts).rstrip() + "\n"


def connection_lines(section: dict[str, Any]) -> list[str]:
    """Which client each connection was (class, peer driver, process), and the run's notes (rows left out)."""
    described = section.get("configurations") or {}
    clients = dict.fromkeys(f"`{d['connection']}` = {d['client']}" for d in described.values())
    lines = []
    if clients:
        lines.append("Connections: " + "; ".join(clients) + ".")
    lines += [f"Note: {note}." for note in section.get("notes") or []]
    lines += [f"Note: `{c['id']}`: measured again after the node failed queries: {'; '.join(c['rounds_redone'])}."
              for c in section.get("cases", []) if c.get("rounds_redone")]
    return lines + [""] if lines else []


def _avoid_namedtuple_lines(cases: list[dict[str, Any]]) -> list[str]:
    """The "Avoid namedtuple" write-up's figures next to this run's ``single`` workload (same shape of workload)."""
    single = next((c for c in cases if c["id"] == "single"), None)
    if single is None:
        return []
    quoted = targets.AVOID_NAMEDTUPLE_RUNTIME_S
    rows = []
    for f in (f for f in quoted if f != REFERENCE):
        r = single["results"].get(f)
        if r is None:
            continue
        wall = 1 / r["qps_ratio"] if r.get("qps_ratio") else None
        rows.append([f, fmt_ratio(quoted[f] / quoted[REFERENCE]), fmt_ratio(wall), fmt_ratio(r.get("cpu_ratio"))])
    if not rows:
        return []
    return [
        "The \"Avoid namedtuple\" write-up (wall-clock run time of its select workload, Python 2.7; "
        + ", ".join(f"{f} {s} s" for f, s in quoted.items())
        + ") against this run's `single` workload, all relative to tuple_factory:",
        "",
        markdown_table(["factory", "write-up run time", "this run: wall per query", "this run: CPU per query"], rows),
        "",
    ]


def _cpu_panel(ax: Any, section: dict[str, Any]) -> None:
    chart.bars(ax, section["cases"], "cpu_ratio",
               f"{THIS.title}: client CPU per query relative to tuple_factory\n(black ticks: targets)",
               "CPU per query / tuple's", {(w, f): limit for w, f, limit in targets.E2E_TARGETS})


def _qps_panel(ax: Any, section: dict[str, Any]) -> None:
    chart.bars(ax, section["cases"], "qps_ratio", f"{THIS.title}: throughput relative to tuple_factory",
               "queries per second / tuple's")


PANELS = (chart.Panel(f"{THIS.title}: client CPU per query", _cpu_panel),
          chart.Panel(f"{THIS.title}: throughput", _qps_panel))


def parse_args(argv: Sequence[str] | None = None) -> tuple[Any, dict[str, Any]]:
    """The command line's options, and the run's spec from them (its configurations checked)."""
    ap = cli.bench_parser(THIS.module, __doc__, SIZES)
    ap.add_argument("--workloads", help=f"comma-separated, of: {', '.join(WORKLOADS)}")
    ap.add_argument("--factories", help="comma-separated configurations (tuple is always included): factory "
                    f"names, <factory>{e2e_configs.OURS_SUFFIX} for our connection, peers: {', '.join(e2e_configs.PEERS)}")
    ap.add_argument("--connections", default="driver",
                    help=f"comma-separated, of {', '.join(e2e_configs.CONNECTIONS)}: every factory on each "
                         "(ours: connection.cluster_options())")
    cli.add_node_options(ap, "factory")
    args = ap.parse_args(argv)
    spec = cli.with_node_options(ap, args, default_spec(args.size))
    if args.workloads:
        spec["workloads"] = workloads_named(ap, args.workloads)
    if args.factories:
        spec["factories"] = args.factories.split(",")
    spec["connections"] = args.connections.split(",")
    try:
        configurations(spec.get("factories"), spec["connections"])
    except ValueError as exc:
        ap.error(str(exc))
    return args, spec


def workloads_named(ap: Any, text: str) -> list[str]:
    """The workloads of ``--workloads`` (comma-separated); an error naming those that are not workloads."""
    named = text.split(",")
    if unknown := [w for w in named if w not in WORKLOADS]:
        ap.error(f"unknown workload(s) {', '.join(unknown)}; choose of {', '.join(WORKLOADS)}")
    return named


def main(argv: Sequence[str] | None = None) -> int:
    return cli.main_against_node(argv, parse_args, run, render)


if __name__ == "__main__":
    sys.exit(main())
