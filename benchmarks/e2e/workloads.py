"""The end-to-end benchmark's workloads (``benchmarks.bench_e2e``): what each one asks, with which
parameters, and the runner that measures a number of its queries."""

from __future__ import annotations

import gc
import random
import time
from dataclasses import dataclass
from typing import Any

from cassandra.cluster import ExecutionProfile

from profiling.harness.patterns import PATTERNS, Context

from ..data import dataset, inserts

KS = dataset.KEYSPACE
MEASURE_TIMEOUT_S = 300.0  # the longest one measurement may wait for its requests in flight
#: The driver's own default request timeout (10 s): the write workloads and ``single50`` run with it,
#: as an application that sets none does, so every request has a timer.
DRIVER_DEFAULT_TIMEOUT_S = ExecutionProfile().request_timeout


class QueriesFailed(RuntimeError):
    """Some queries of a measurement failed (the server answered an error or timed out): the
    benchmark measures that round again (``bench_e2e.bench_workload``)."""


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
    request_timeout: float | None = None  # None: the session's own (``dataset.CONNECT_OPTIONS``)
    helper: bool = False    # through the driver's execute_concurrent (results as a list), not callback chains

    @property
    def schema(self) -> tuple[str, ...]:
        """DDL the workload needs beyond ``dataset.ensure_dataset`` (the write workloads' table,
        ``benchmarks.data.inserts``' table, created if absent)."""
        return inserts.SCHEMA if self.keys == "inserts" else ()

    @property
    def pattern(self) -> str:
        """The execution pattern (``profiling.harness.patterns``) that runs it: ``sync`` for one request in
        flight, else ``callback_full_pipeline`` with ``in_flight`` chains."""
        if self.helper:
            return "execute_concurrent_list"
        return "sync" if self.in_flight <= 1 else "callback_full_pipeline"


WORKLOADS: dict[str, Workload] = {w.id: w for w in (
    Workload("single", "sequential 1-row SELECTs (the 'Avoid namedtuple' select workload), 10 columns",
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
    Workload("single50", "1-row SELECTs, 10 columns, 50 in flight, the driver's default timeout",
             f"SELECT * FROM {KS}.narrow WHERE k = ?", "narrow", 1, 10, 50,
             request_timeout=DRIVER_DEFAULT_TIMEOUT_S),
    *(Workload(f"insert{n}", f"prepared 10-column INSERTs, {n:,} in flight, the driver's default timeout",
               inserts.INSERT, "inserts", 0, 10, n, request_timeout=DRIVER_DEFAULT_TIMEOUT_S)
      for n in (1, 50, 1000)),
    Workload("insert50_list", "prepared 10-column INSERTs through the driver's execute_concurrent, 50 in flight",
             inserts.INSERT, "inserts", 0, 10, 50, helper=True),
)}


def execute_concurrent_list(ctx: Context, ops: range) -> None:
    """The driver's ``execute_concurrent`` with its results as a list (as ``execute_concurrent_with_args``
    gives them), ``concurrency`` in flight, each statement bound as the helper takes it; the function
    looked up in ``cassandra.concurrent`` when called, where an enabled session's calls are routed."""
    from cassandra import concurrent

    def statements() -> Any:
        for i in ops:
            ctx.tally.sending()
            yield ctx.request(i), None

    for ok, result in concurrent.execute_concurrent(ctx.session, statements(), concurrency=ctx.concurrency,
                                                     raise_on_first_error=False):
        if ok:
            ctx.tally.success(result)
        else:
            ctx.failed(result)


#: the bodies of the patterns only the workloads here run
BODIES = {"execute_concurrent_list": execute_concurrent_list}


def _params(kind: str, seed: int = 4) -> list[tuple]:
    """The parameters the queries of a workload take in turn (drawn once, from a fixed seed)."""
    rng = random.Random(f"{kind}/{seed}")
    if kind == "narrow":
        return [(rng.randrange(dataset.NARROW_ROWS),) for _ in range(10_000)]
    if kind == "pages":
        return [(rng.randrange(dataset.PAGES_PARTITIONS),) for _ in range(1_000)]
    if kind == "wide_row":
        return [(rng.randrange(dataset.WIDE_PARTITIONS), rng.randrange(dataset.PAGE_ROWS)) for _ in range(10_000)]
    if kind == "wide":
        return [(rng.randrange(dataset.WIDE_PARTITIONS),) for _ in range(1_000)]
    if kind == "coll":
        return [(rng.randrange(dataset.COLL_PARTITIONS),) for _ in range(1_000)]
    if kind == "inserts":  # the write workloads' table's rows, in key order
        return inserts.rows()
    raise ValueError(kind)


class Runner:
    """Runs a workload's pattern over its next ``n`` queries, the parameters taken in turn across calls."""

    def __init__(self, session: Any, w: Workload) -> None:
        from cassandra.query import PreparedStatement

        stmt = session.prepare(w.query)
        if w.fetch_size:
            stmt.fetch_size = w.fetch_size
        driver_bind = PreparedStatement.bind if isinstance(stmt, PreparedStatement) else type(stmt).bind
        self._stmt, self._params, self._driver_bind = stmt, _params(w.keys), driver_bind
        self.session, self.workload, self.body = session, w, (BODIES.get(w.pattern) or PATTERNS[w.pattern].body)
        self.request = self._requests()
        self.next_op = 0

    def binder(self) -> Any:
        """How the session binds now: pyfactories' ``bind`` when the fast path binds the statements
        this session prepares (``pyfactories.enable``), else the driver's. The statement is prepared
        once, whatever was applied first, so each configuration binds its own way on it."""
        from pyfactories import binding

        return binding.bind if binding.is_installed(self.session) else self._driver_bind

    def _requests(self) -> Any:
        """``i -> bound statement``, bound as :meth:`binder` says."""
        stmt, params, bind = self._stmt, self._params, self.binder()
        return lambda i: bind(stmt, params[i % len(params)])

    def measure(self, n: int, factory: str) -> tuple[float, float, int]:
        """(CPU seconds of the whole process, wall seconds, rows) for the next ``n`` queries;
        raises the first error, and if the rows are not ``n`` x the workload's rows per query."""
        w = self.workload
        self.request = self._requests()
        ctx = Context(self.session, self.request, concurrency=w.in_flight, stop_on_error=True,
                      timeout=MEASURE_TIMEOUT_S,
                      **({} if w.request_timeout is None else {"request_timeout": w.request_timeout}))
        ops = range(self.next_op, self.next_op + n)
        self.next_op += n
        gc.collect()
        c0, w0 = time.process_time(), time.perf_counter()
        self.body(ctx, ops)
        c1, w1 = time.process_time(), time.perf_counter()
        tally, what = ctx.tally, f"{self.workload.id}/{factory}"
        if tally.errors:
            raise QueriesFailed(f"{what}: {tally.errors} of {n} queries failed, the first with {tally.first_error}")
        if tally.rows != n * self.workload.rows:
            raise RuntimeError(f"{what}: {tally.rows} rows for {n} queries, expected {n * self.workload.rows}")
        return c1 - c0, w1 - w0, tally.rows
