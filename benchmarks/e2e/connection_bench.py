"""What the connection benchmarks share (``bench_timeouts``, ``bench_framing``, ``bench_writes``):
configurations of a connection class, each in a process of its own for the whole run, taking turns
round by round; the node pinned apart as ``spec`` says; the command line.

A configuration is ``(connection class as "module:name", request timeout: "default" or None)``. Its
process connects (protocol v5, no compression), then runs segments of a workload
(``profiling.harness.patterns``' ``callback_full_pipeline`` at so many chains in flight) as asked:
"insert" (``benchmarks.data.inserts``' prepared 10-column INSERT) or "select" (a prepared 1-row
SELECT of the same table, the fast path's named rows). Client CPU per request is the process's CPU
time (all its threads) over the requests; throughput is requests per wall-clock second; figures
are medians over rounds, a ratio the median of per-round ratios, with their range.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import statistics
import time
import traceback
from typing import Any, Sequence

from ..data import inserts
from ..harness import cli
from ..harness.pinning import parse_cpus, pin, unpin
from ..harness.stats import paired_ratio
from . import reference

IN_FLIGHT = (50, 1000)  # the default levels of ``--in-flight``
SIZES = {"quick": {"rounds": 5, "round_s": 0.5}, "full": {"rounds": 11, "round_s": 1.0}}
MEASURE_TIMEOUT_S = 300.0


def _requests(session: Any, workload: str, rows: list[tuple]) -> Any:
    """``i -> bound statement`` of a workload: "insert" (a 10-column row), or "select" (one of
    ``inserts.SELECT_KEYS`` rows, the fast path's named rows)."""
    insert = session.prepare(inserts.INSERT)
    if workload == "insert":
        return lambda i: insert.bind(rows[i % inserts.KEYS])
    from cassandra.concurrent import execute_concurrent_with_args

    from pyfactories import decoding

    execute_concurrent_with_args(session, insert, rows[:inserts.SELECT_KEYS], concurrency=100, raise_on_first_error=True)
    if not decoding.enable(session, rows="named"):
        raise RuntimeError(f"the fast path is off: {decoding.UNAVAILABLE_REASON}")
    select = session.prepare(inserts.SELECT)
    return lambda i: select.bind((i % inserts.SELECT_KEYS,))


def _worker(pipe: Any, config: str, hosts: list[str], port: int, client_cpus: list[int] | None,
            setup: tuple[str, Any], workload: str = "insert") -> None:
    """One configuration's process (``setup``: its ``(connection class, timeout)``): connect, then run
    ``("run", n, in_flight)`` segments of ``workload`` as asked, answering ``(cpu_s, wall_s)``;
    ``("stop",)`` shuts down."""
    try:
        pin([os.getpid()], client_cpus)  # before connecting: the event loop thread inherits it
        import importlib

        from profiling.cluster import Contact, connect
        from profiling.harness.patterns import PATTERNS, SESSION_TIMEOUT, Context

        where, timeout = setup
        module, name = where.split(":")
        cls = getattr(importlib.import_module(module), name)
        cluster, session = connect(Contact(hosts, port), connection_class=cls, protocol_version=5,
                                   compression=False, connect_timeout=30.0)
        for ddl in inserts.SCHEMA:
            session.execute(ddl, timeout=60.0)
        make = _requests(session, workload, inserts.rows())
        body = PATTERNS["callback_full_pipeline"].body
        request_timeout = SESSION_TIMEOUT if timeout == "default" else timeout
        start = 0
        pipe.send(("ready", cluster.connection_class.__name__, session.default_timeout))
        while True:
            msg = pipe.recv()
            if msg[0] == "stop":
                break
            _, n, in_flight = msg
            ctx = Context(session, make, concurrency=in_flight,
                          stop_on_error=True, timeout=MEASURE_TIMEOUT_S, request_timeout=request_timeout)
            gc.collect()
            c0, w0 = time.process_time(), time.perf_counter()
            body(ctx, range(start, start + n))
            c1, w1 = time.process_time(), time.perf_counter()
            start += n
            if ctx.tally.errors:
                raise RuntimeError(f"{config}: {ctx.tally.errors} of {n} requests failed, the first with "
                                   f"{ctx.tally.first_error}")
            pipe.send(("done", c1 - c0, w1 - w0))
        cluster.shutdown()
        pipe.send(("stopped",))
    except BaseException:
        pipe.send(("error", traceback.format_exc()))


class Workers:
    """One process per configuration, started (and pinned) at once, asked in turn."""

    def __init__(self, hosts: list[str], port: int, client_cpus: list[int] | None,
                 configs: dict[str, tuple[str, Any]], workload: str = "insert") -> None:
        ctx = multiprocessing.get_context("spawn")
        self.pipes, self.procs, self.info = {}, {}, {}
        for config, setup in configs.items():
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(child, config, hosts, port, client_cpus, setup, workload),
                               daemon=True)
            proc.start()
            self.pipes[config], self.procs[config] = parent, proc
        for config in configs:
            _, cls, default_timeout = self._answer(config, "ready")
            self.info[config] = {"connection_class": cls, "session_default_timeout": default_timeout,
                                 "request_timeout": configs[config][1], "workload": workload}

    def _answer(self, config: str, expected: str) -> tuple:
        msg = self.pipes[config].recv()
        if msg[0] == "error":
            raise RuntimeError(f"the {config!r} process failed:\n{msg[1]}")
        if msg[0] != expected:
            raise RuntimeError(f"the {config!r} process answered {msg[0]!r}, not {expected!r}")
        return msg

    def measure(self, config: str, n: int, in_flight: int) -> tuple[float, float]:
        self.pipes[config].send(("run", n, in_flight))
        _, cpu, wall = self._answer(config, "done")
        return cpu, wall

    def close(self) -> None:
        for config, pipe in self.pipes.items():
            if self.procs[config].is_alive():
                try:
                    pipe.send(("stop",))
                    self._answer(config, "stopped")
                except (OSError, EOFError, RuntimeError):
                    pass
        for proc in self.procs.values():
            proc.join(30)
            if proc.is_alive():
                proc.terminate()


def bench_level(workers: Workers, in_flight: int, rounds: int, round_s: float, names: Sequence[str],
                bases: Sequence[str], say=print) -> dict[str, Any]:
    """Interleaved rounds at ``in_flight`` chains of the configurations ``names``: figures per
    configuration, ratios to each of ``bases``."""
    names = list(names)
    probe = max(2_000, 4 * in_flight)
    for name in names:  # the unrecorded warm-up round, which also sizes the segments
        _, wall = workers.measure(name, probe, in_flight)
    _, wall = workers.measure(names[0], probe, in_flight)
    n = max(2 * in_flight, round(round_s * probe / max(wall, 1e-6)))
    say(f"  {in_flight} in flight: {n} requests x {len(names)} configurations x {rounds} rounds")
    cpu: dict[str, list[float]] = {c: [] for c in names}
    qps: dict[str, list[float]] = {c: [] for c in names}
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            c, wl = workers.measure(name, n, in_flight)
            cpu[name].append(c / n)
            qps[name].append(n / wl)
    results = {}
    for name in names:
        results[name] = {
            "cpu_us_per_request": statistics.median(cpu[name]) * 1e6,
            "requests_per_s": statistics.median(qps[name]),
            "cpu_us_rounds": [x * 1e6 for x in cpu[name]],
            "requests_per_s_rounds": qps[name],
            **{f"{metric}_vs_{base.replace(' ', '_')}": _ratio(series[name], series[base])
               for base in bases for metric, series in (("cpu", cpu), ("qps", qps))},
        }
    return {"in_flight": in_flight, "requests_per_round": n, "rounds": rounds, "results": results}


def _ratio(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    per_round = [x / y for x, y in zip(a, b) if y]
    return {"median": paired_ratio(a, b), "range": [min(per_round), max(per_round)] if per_round else None}


def server_pids(spec: dict[str, Any], say=print) -> tuple[list[int], dict[str, Any]]:
    """The node's PIDs to pin (``--server-pid``, else the local node's), and ``spec`` saying when none."""
    servers = list(spec.get("server_pids") or [])
    if not servers and spec.get("local"):
        from profiling.node import server_pids as local_pids

        servers = local_pids()
    if spec.get("server_cpus") and not servers:
        say("the server is not a node this machine runs (name its PID: --server-pid); not pinned")
        spec = {**spec, "server_cpus": None, "not_pinned": "no server PID"}
    return servers, spec


def measure_cases(spec: dict[str, Any], hosts: list[str], port: int, configs: dict[str, tuple[str, Any]],
                  workload: str, in_flight: Sequence[int], bases: Sequence[str], say=print
                  ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One process per configuration for ``workload``, measured at each level of ``in_flight``."""
    workers = None
    try:
        workers = Workers(hosts, port, spec.get("client_cpus"), configs, workload)
        classes = ", ".join(f"{c} = {i['connection_class']}" for c, i in workers.info.items())
        say(f"{workload}: {classes}{reference.pinning_words(spec)}")
        cases = [bench_level(workers, f, spec["rounds"], spec["round_s"], list(configs), bases, say)
                 for f in in_flight]
        return cases, workers.info
    finally:
        if workers is not None:
            workers.close()


def run_pinned(spec: dict[str, Any], hosts: list[str], port: int, configs: dict[str, tuple[str, Any]],
               workloads: dict[str, Sequence[int]], bases: Sequence[str], alone: tuple[str, Any], depth: str,
               say=print) -> dict[str, Any]:
    """The workloads end to end (server pinned as ``spec`` says), then ``alone = (key, micro)``: the step
    on its own, in this process, pinned as the client: a depth's section."""
    servers, spec = server_pids(spec, say)
    spec = {**spec, "in_flight": {w: list(levels) for w, levels in workloads.items()}}
    pinned = pin(servers, spec.get("server_cpus"))
    try:
        cases, info = measure_workloads(spec, hosts, port, configs, workloads, bases, say)
        mine = pin([os.getpid()], spec.get("client_cpus"))
        try:
            figures = alone[1](spec["rounds"])
        finally:
            unpin(mine, pids=[os.getpid()])
    finally:
        unpin(pinned, pids=servers)
    return {"depth": depth, "config": spec, "configurations": info, "cases": cases, alone[0]: figures,
            "method": METHOD}


def measure_workloads(spec: dict[str, Any], hosts: list[str], port: int, configs: dict[str, tuple[str, Any]],
                      workloads: dict[str, Sequence[int]], bases: Sequence[str], say=print
                      ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """:func:`measure_cases` for each workload at its levels of requests in flight:
    (the cases, each with its workload; the configurations' processes by workload)."""
    cases, info = [], {}
    for workload, levels in workloads.items():
        found, info[workload] = measure_cases(spec, hosts, port, configs, workload, list(levels), bases, say)
        cases += [{**case, "workload": workload} for case in found]
    return cases, info


def case_rows(cases: list[dict[str, Any]], bases: Sequence[str]) -> list[list[str]]:
    """Table rows: workload, in flight, configuration, CPU/request, requests/s, CPU vs. each of
    ``bases``, requests/s vs. the driver."""
    rows = []
    for case in cases:
        for name, r in case["results"].items():
            ratios = [r[f"cpu_vs_{base}"] for base in bases] + [r["qps_vs_driver"]]
            rows.append([case["workload"], str(case["in_flight"]), name, f"{r['cpu_us_per_request']:.1f} µs",
                         f"{r['requests_per_s']:.0f}", *(reference.with_range(x["median"], x["range"])
                                                         for x in ratios)])
    return rows


METHOD = ("one process per configuration, taking turns round by round (order rotated); client CPU "
          "per request = time.process_time() delta of that process (all threads) / requests; "
          "throughput = requests / wall second; medians over rounds; ratios = median of per-round "
          "ratios, with their range")


def parser(prog: str, doc: str | None) -> Any:
    """The options of a connection benchmark (``--in-flight``: ``bench_timeouts``' levels)."""
    ap = cli.bench_parser(prog, doc, SIZES)
    ap.add_argument("--hosts", help="comma-separated contact points (default PYFACTORIES_HOSTS, else the local node)")
    ap.add_argument("--port", type=int)
    ap.add_argument("--rounds", type=int, help="default: 5 (quick), 11 (full)")
    ap.add_argument("--round-seconds", type=float,
                    help="approximate length of one configuration's segment")
    ap.add_argument("--in-flight", default=",".join(map(str, IN_FLIGHT)), help="comma-separated chain counts")
    ap.add_argument("--client-cpus", type=parse_cpus, metavar="LIST", help="default: the last CPU, with two or more")
    ap.add_argument("--server-cpus", type=parse_cpus, metavar="LIST", help="default: the first CPU, with two or more")
    ap.add_argument("--server-pid", type=int, action="append", metavar="PID",
                    help="the PID of a node on this machine that the project did not start (repeatable)")
    ap.add_argument("--no-pin", action="store_true", help="pin nothing")
    return ap


def spec_of(args: Any) -> dict[str, Any]:
    pair = None if args.no_pin else reference.cpus()
    size = SIZES[args.size]
    return {"size": args.size, "rounds": args.rounds or size["rounds"],
            "round_s": args.round_seconds or size["round_s"],
            "in_flight": [int(x) for x in args.in_flight.split(",")],
            "client_cpus": None if args.no_pin else args.client_cpus or (pair and pair[0]),
            "server_cpus": None if args.no_pin else args.server_cpus or (pair and pair[1]),
            "server_pids": args.server_pid}


def main(module: Any, argv: list[str] | None = None) -> int:
    """Run a connection benchmark's ``run`` and ``render`` (``module``: its module) with these options."""
    name = module.__spec__.name if getattr(module, "__spec__", None) else module.__name__
    args = parser(name, module.__doc__).parse_args(argv)
    spec = spec_of(args)
    from profiling.cluster import reach

    with reach(args.hosts, args.port) as contact:
        spec["local"] = contact.local
        section = module.run(spec, list(contact.hosts), contact.port)
    cli.print_and_save(section, module.render, args.json)
    return 0


