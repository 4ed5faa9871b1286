"""End-to-end benchmark: real queries against Cassandra, client CPU per query and throughput.

    python -m benchmarks.bench_e2e [--size quick|full] [--json PATH] [--hosts h1,h2]

Workloads (tables in ``benchmarks/dataset.py``; all prepared statements, run the
way an application runs them):

* ``single``: seed 004's workload, many small sequential SELECTs of one row
  over 10 columns, keys drawn at random from 10,000 rows;
* ``pages``: pages of 200 rows x 10 columns, 50 requests in flight;
* ``wide``: sequential SELECTs of one row of 50 columns;
* ``coll``: pages of 200 rows x 10 columns, 6 of them collections/tuples, 50 in flight;
* ``wide_pages`` (full size only): pages of 200 rows x 50 columns, 50 in flight.

Method: one session; every factory is applied to it in turn
(``profiling.factories``), round by round (A B C ..., the order rotated each
round), the same number of queries per factory and round, after a warm-up
of every factory. Client CPU is the process CPU time of this process (all
threads: the caller and the driver's event loop) divided by the queries;
throughput is queries per wall-clock second. Each factory's figure is the
median over rounds; its ratio to ``tuple_factory`` is the median of the
per-round ratios (each taken against the ``tuple`` segment of the same round),
so slow drifts of a shared machine cancel out.
"""

from __future__ import annotations

import gc
import itertools
import os
import random
import statistics
import sys
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterator, Sequence

from . import common, dataset, targets
from .common import SHORT, fmt_ratio, markdown_table

KS = dataset.KEYSPACE


@dataclass(frozen=True)
class Workload:
    id: str
    description: str
    query: str
    keys: str               # how parameters are drawn: see _params
    rows: int               # rows per query
    cols: int
    in_flight: int = 1      # 1 = sequential session.execute
    fetch_size: int | None = None


WORKLOADS: dict[str, Workload] = {w.id: w for w in (
    Workload("single", "seed 004: sequential 1-row SELECTs, 10 columns",
             f"SELECT * FROM {KS}.narrow WHERE k = ?", "narrow", 1, 10),
    Workload("pages", "200-row pages, 10 columns, 50 in flight",
             f"SELECT * FROM {KS}.pages WHERE p = ?", "pages", dataset.PAGE_ROWS, 10, 50, dataset.PAGE_ROWS),
    Workload("wide", "sequential 1-row SELECTs, 50 columns",
             f"SELECT * FROM {KS}.wide WHERE p = ? AND c = ?", "wide_row", 1, dataset.WIDE_COLS),
    Workload("coll", "200-row pages, 10 columns with collections, 50 in flight",
             f"SELECT * FROM {KS}.coll WHERE p = ?", "coll", dataset.PAGE_ROWS, 10, 50, dataset.PAGE_ROWS),
    Workload("wide_pages", "200-row pages, 50 columns, 50 in flight",
             f"SELECT * FROM {KS}.wide WHERE p = ?", "wide", dataset.PAGE_ROWS, dataset.WIDE_COLS, 50,
             dataset.PAGE_ROWS),
)}

SIZES: dict[str, dict[str, Any]] = {
    "quick": {"rounds": 5, "round_s": 0.15, "workloads": ["single", "pages", "wide", "coll"]},
    "full": {"rounds": 9, "round_s": 1.0, "workloads": ["single", "pages", "wide", "coll", "wide_pages"]},
    "tiny": {"rounds": 5, "round_s": 0.02, "workloads": ["single", "pages"]},
}
WARMUP_QUERIES = 50  # per factory (and again for tuple, to size the rounds)


def _params(kind: str, seed: int = 4) -> Iterator[tuple]:
    rng = random.Random(f"{kind}/{seed}")
    pool: list[tuple]
    if kind == "narrow":
        pool = [(rng.randrange(dataset.NARROW_ROWS),) for _ in range(10_000)]
    elif kind == "pages":
        pool = [(rng.randrange(dataset.PAGES_PARTITIONS),) for _ in range(1_000)]
    elif kind == "wide_row":
        pool = [(rng.randrange(dataset.WIDE_PARTITIONS), rng.randrange(dataset.PAGE_ROWS)) for _ in range(10_000)]
    elif kind == "wide":
        pool = [(rng.randrange(dataset.WIDE_PARTITIONS),) for _ in range(1_000)]
    elif kind == "coll":
        pool = [(rng.randrange(dataset.COLL_PARTITIONS),) for _ in range(1_000)]
    else:
        raise ValueError(kind)
    return itertools.cycle(pool)


# --- the two ways of running queries ------------------------------------------------------------

def run_sequential(session, stmt, params: Iterator[tuple], n: int) -> int:
    """``n`` blocking ``session.execute`` calls; returns the rows received."""
    execute = session.execute
    rows = 0
    for _ in range(n):
        rows += len(execute(stmt, next(params)).current_rows)
    return rows


class Pipeline:
    """Keeps ``in_flight`` requests outstanding with callbacks until ``n`` have completed.

    Each completion (on the driver's event-loop thread) starts the next request,
    so the pipeline never drains until the end.
    """

    def __init__(self, session, stmt, params: Iterator[tuple], in_flight: int, timeout: float = 300.0) -> None:
        self.session, self.stmt, self.params, self.in_flight, self.timeout = session, stmt, params, in_flight, timeout
        self._lock = threading.Lock()

    def run(self, n: int) -> int:
        self.n, self.finished, self.rows = n, 0, 0
        self.error: BaseException | None = None
        self.done = threading.Event()
        first = min(self.in_flight, n)
        self.started = first
        for _ in range(first):
            self._send()
        if not self.done.wait(self.timeout):
            raise TimeoutError(f"pipeline: {self.finished}/{n} done after {self.timeout} s")
        if self.error is not None:
            raise self.error
        return self.rows

    def _send(self) -> None:
        with self._lock:
            params = next(self.params)
        fut = self.session.execute_async(self.stmt, params)
        fut.add_callbacks(self._ok, self._err)

    def _ok(self, rows: Any) -> None:
        with self._lock:
            self.finished += 1
            self.rows += len(rows)
            more = self.started < self.n
            if more:
                self.started += 1
            last = self.finished == self.n
        if more:
            self._send()
        if last:
            self.done.set()

    def _err(self, exc: BaseException) -> None:
        with self._lock:
            self.error = exc
        self.done.set()


def _runner(session, stmt, w: Workload) -> Callable[[int], int]:
    params = _params(w.keys)
    if w.in_flight <= 1:
        return lambda n: run_sequential(session, stmt, params, n)
    pipe = Pipeline(session, stmt, params, w.in_flight)
    return pipe.run


# --- measurement ----------------------------------------------------------------------------

def measure(run: Callable[[int], int], n: int) -> tuple[float, float, int]:
    """(CPU seconds of the whole process, wall seconds, rows) for ``run(n)``."""
    gc.collect()
    c0, w0 = time.process_time(), time.perf_counter()
    rows = run(n)
    c1, w1 = time.process_time(), time.perf_counter()
    return c1 - c0, w1 - w0, rows


def bench_workload(session, w: Workload, factories: Sequence[str], rounds: int, round_s: float,
                   say=print) -> dict[str, Any]:
    from profiling.factories import resolve

    stmt = session.prepare(w.query)
    if w.fetch_size:
        stmt.fetch_size = w.fetch_size
    run = _runner(session, stmt, w)
    choices = [resolve(f) for f in factories]
    # warm-up: every factory once (fills caches, prepares, settles the connection)
    warm = max(WARMUP_QUERIES, w.in_flight)
    for ch in choices:
        ch.apply(session)
        _, _, rows = measure(run, warm)
        if rows != warm * w.rows:
            raise RuntimeError(f"{w.id}/{ch.name}: {rows} rows for {warm} queries, expected {warm * w.rows}")
    # queries per round so that a tuple segment lasts about round_s
    choices[0].apply(session)
    probe = max(WARMUP_QUERIES, 2 * w.in_flight) if w.in_flight > 1 else WARMUP_QUERIES
    _, wall, _ = measure(run, probe)
    n = max(20, w.in_flight, round(round_s * probe / max(wall, 1e-6)))
    say(f"  {w.id}: {n} queries x {len(choices)} factories x {rounds} rounds (~{n * wall / probe:.2f} s each)")
    cpu: dict[str, list[float]] = {c.name: [] for c in choices}
    wall_s: dict[str, list[float]] = {c.name: [] for c in choices}
    for r in range(rounds):
        k = r % len(choices)
        for ch in choices[k:] + choices[:k]:
            ch.apply(session)
            c, wl, rows = measure(run, n)
            if rows != n * w.rows:
                raise RuntimeError(f"{w.id}/{ch.name}: {rows} rows for {n} queries, expected {n * w.rows}")
            cpu[ch.name].append(c / n)
            wall_s[ch.name].append(wl / n)
    choices[0].apply(session)
    base = factories[0]
    results = {}
    for name in factories:
        qps = [1.0 / x for x in wall_s[name]]
        base_qps = [1.0 / x for x in wall_s[base]]
        per_round = [a / b for a, b in zip(cpu[name], cpu[base]) if b]
        results[name] = {
            "cpu_us_per_query": statistics.median(cpu[name]) * 1e6,
            "qps": statistics.median(qps),
            "cpu_ratio": common.paired_ratio(cpu[name], cpu[base]),
            "qps_ratio": common.paired_ratio(qps, base_qps),
            "cpu_ratio_range": [min(per_round), max(per_round)] if per_round else None,
            "cpu_us_rounds": [x * 1e6 for x in cpu[name]],
            "qps_rounds": qps,
        }
    return {"id": w.id, "description": w.description, "query": w.query, "rows": w.rows, "cols": w.cols,
            "in_flight": w.in_flight, "fetch_size": w.fetch_size, "queries_per_round": n, "rounds": rounds,
            "results": results}


def default_spec(size: str = "quick") -> dict[str, Any]:
    cfg = dict(SIZES[size])
    cfg["size"] = size
    return cfg


def factory_names(only: Sequence[str] | None = None) -> list[str]:
    """``tuple`` first (the reference), then the driver's, ours, and the fast path when it is usable."""
    names = list(common.DRIVER + common.OURS) + common.fastpath_names()
    if only:
        unknown = [f for f in only if f not in names]
        if unknown:
            raise ValueError(f"unknown or unavailable factories: {', '.join(unknown)}; choose from {', '.join(names)}")
        names = ["tuple"] + [f for f in only if f != "tuple"]
    return names


def pin(pids: Sequence[int], cpus: Sequence[int] | None) -> dict[int, set[int]]:
    """Keep every thread of ``pids`` (and threads they start from now on) on ``cpus``; the old sets by thread.

    On a small machine the client's two threads (the caller and the driver's
    event loop) and the server share the CPUs, and a large part of a
    synchronous query's client CPU is spent waking threads across CPUs.
    Pinning the client, or client and server apart, shows the same comparison
    without most of that part.
    """
    saved: dict[int, set[int]] = {}
    if not cpus:
        return saved
    for pid in pids:
        for tid in _threads(pid):
            try:
                saved[tid] = os.sched_getaffinity(tid)
                os.sched_setaffinity(tid, set(cpus))
            except (ProcessLookupError, PermissionError):  # ended meanwhile, or not ours
                pass
    return saved


def unpin(saved: dict[int, set[int]]) -> None:
    for tid, cpus in saved.items():
        try:
            os.sched_setaffinity(tid, cpus)
        except (ProcessLookupError, PermissionError):
            pass


def _threads(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return [pid]


def parse_cpus(text: str) -> list[int]:
    """``"1"`` or ``"0,1"`` or ``"0-1"`` -> CPU numbers."""
    cpus: set[int] = set()
    for part in text.split(","):
        lo, dash, hi = part.strip().partition("-")
        if not lo.isdigit() or (dash and not (hi.isdigit() and int(hi) >= int(lo))):
            raise ValueError(f"not a CPU list: {text!r} (e.g. 1 or 0,1 or 0-1)")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return sorted(cpus)


def run(spec: dict[str, Any], hosts: Sequence[str], port: int, say=print) -> dict[str, Any]:
    """Connect, make sure the data set is there, run the workloads: the ``e2e`` section."""
    factories = factory_names(spec.get("factories"))
    from profiling.node import server_pids

    pinned = pin([os.getpid()], spec.get("client_cpus"))
    pinned.update(pin(server_pids() if spec.get("server_cpus") else [], spec.get("server_cpus")))
    cluster, session = dataset.connect(hosts, port)  # the driver's event-loop thread inherits the pinning
    try:
        version = dataset.cassandra_version(session)
        say(f"end to end: Cassandra {version} at {', '.join(hosts)}:{port}, protocol v{cluster.protocol_version}, "
            f"{len(factories)} factories")
        dataset.ensure_dataset(session, say=say)
        cases = []
        for wid in spec["workloads"]:
            cases.append(bench_workload(session, WORKLOADS[wid], factories, spec["rounds"], spec["round_s"], say=say))
        nodes = len(cluster.metadata.all_hosts())
        protocol_version = cluster.protocol_version
        connection_class = cluster.connection_class.__name__
    finally:
        cluster.shutdown()
        unpin(pinned)
    section = {
        "depth": "e2e",
        "config": {**spec, "factories": factories},
        "cassandra": {"version": version, "hosts": list(hosts), "port": port, "nodes": nodes,
                      "protocol_version": protocol_version},
        "connection_class": connection_class,
        "method": ("client CPU per query = time.process_time() delta (all threads) / queries; throughput = "
                   "queries / wall second; medians over rounds; ratios = median of per-round ratios to the "
                   "tuple segment of the same round"),
        "workloads": {wid: asdict(WORKLOADS[wid]) for wid in spec["workloads"]},
        "cases": cases,
    }
    section["verdicts"] = targets.as_json(targets.end_to_end(section))
    return section


def render(section: dict[str, Any]) -> str:
    cases = section.get("cases", [])
    if not cases:
        return f"### End to end\n\nNot run: {section.get('skipped', 'no workloads')}."
    factories = section["config"]["factories"]
    header = ["factory"] + [f"{c['id']} ({c['rows']}x{c['cols']})" for c in cases]
    cpu_rows, qps_rows, abs_rows = [], [], []
    for f in factories:
        cpu_rows.append([f] + [fmt_ratio(c["results"][f]["cpu_ratio"]) for c in cases])
        qps_rows.append([f] + [fmt_ratio(c["results"][f]["qps_ratio"]) for c in cases])
        abs_rows.append([f] + [f"{c['results'][f]['cpu_us_per_query']:.0f} µs, {c['results'][f]['qps']:.0f}/s"
                               for c in cases])
    cfg, cas = section["config"], section["cassandra"]
    parts = [
        f"### End to end (Cassandra {cas['version']}, {cas['nodes']} node(s), protocol v{cas['protocol_version']}; "
        f"{cfg['rounds']} interleaved rounds, medians"
        + "".join(f"; {who} pinned to CPU {','.join(map(str, cfg[f'{who}_cpus']))}"
                  for who in ("client", "server") if cfg.get(f"{who}_cpus"))
        + ")",
        "",
        "Client CPU per query relative to `tuple_factory` (lower is better; median of per-round ratios):",
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
        *_seed004_lines(cases),
        "Workloads: " + "; ".join(f"`{c['id']}` = {c['description']} ({c['queries_per_round']} queries per "
                                  "factory and round)" for c in cases) + ".",
        "",
        *targets.fenced("Issue 5 targets (client CPU per query / tuple_factory's):", section["verdicts"]),
    ]
    return "\n".join(parts)


def _seed004_lines(cases: list[dict[str, Any]]) -> list[str]:
    """Seed 004's figures next to this run's ``single`` workload (same shape of workload)."""
    single = next((c for c in cases if c["id"] == "single"), None)
    if single is None:
        return []
    seed = targets.SEED004_RUNTIME_S
    rows = []
    for f in ("named_tuple", "dict", "ordered_dict"):
        r = single["results"].get(f)
        if r is None:
            continue
        wall = 1 / r["qps_ratio"] if r.get("qps_ratio") else None
        rows.append([f, fmt_ratio(seed[f] / seed["tuple"]), fmt_ratio(wall), fmt_ratio(r.get("cpu_ratio"))])
    if not rows:
        return []
    return [
        "Seed 004 (\"Avoid namedtuple\": wall-clock run time of its select workload, Python 2.7; tuple "
        f"{seed['tuple']} s, named tuple {seed['named_tuple']} s, dict {seed['dict']} s, ordered dict "
        f"{seed['ordered_dict']} s) against this run's `single` workload, all relative to tuple_factory:",
        "",
        markdown_table(["factory", "seed 004 run time", "this run: wall per query", "this run: CPU per query"], rows),
        "",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    ap = common.bench_parser("benchmarks.bench_e2e", __doc__, SIZES)
    ap.add_argument("--hosts", help="comma-separated contact points of your own cluster (nothing is started)")
    ap.add_argument("--port", type=int, help="CQL port (default 9042 or PYFACTORIES_PORT)")
    ap.add_argument("--workloads", help=f"comma-separated, of: {', '.join(WORKLOADS)}")
    ap.add_argument("--factories", help="comma-separated factory names (tuple is always included)")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--round-seconds", type=float, help="approximate length of one factory's segment")
    ap.add_argument("--client-cpus", type=parse_cpus, metavar="LIST",
                    help="pin the client (and the driver's event-loop thread) to these CPUs, e.g. 1 or 0-1")
    ap.add_argument("--server-cpus", type=parse_cpus, metavar="LIST",
                    help="pin the local Cassandra node(s) to these CPUs for the run (restored after)")
    args = ap.parse_args(argv)
    spec = default_spec(args.size)
    if args.workloads:
        spec["workloads"] = args.workloads.split(",")
    if args.factories:
        spec["factories"] = args.factories.split(",")
    if args.rounds:
        spec["rounds"] = args.rounds
    if args.round_seconds:
        spec["round_s"] = args.round_seconds
    if args.hosts and args.server_cpus:
        ap.error("--server-cpus pins the local node; it cannot pin the servers named by --hosts")
    for who in ("client", "server"):
        if getattr(args, f"{who}_cpus"):
            spec[f"{who}_cpus"] = getattr(args, f"{who}_cpus")
    if spec["rounds"] < 5:
        print("note: fewer than 5 rounds; the project's method asks for at least 5", file=sys.stderr)

    from profiling.node import ensure_up, port, stop

    if args.hosts:
        started, hosts = False, [h.strip() for h in args.hosts.split(",") if h.strip()]
    else:
        started, hosts = ensure_up(nodes=1)
    try:
        section = run(spec, hosts, args.port or port())
    finally:
        if started:
            stop()
    common.print_and_save("e2e", section, render, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
