"""The asyncio side of the end-to-end benchmark (``benchmarks.bench_asyncio``): an asyncio application's
requests, each configuration a client in a process of its own (``clients.start``) with its own loop.

Configurations (:data:`CONFIGS`; rows as tuples in all of them, so that they compare):

* ``driver+bridge``: the driver (its ``tuple_factory``, its default libev connection) used from the
  loop through the usual hand-written bridge: ``session.execute_async(...)``, its ``add_callbacks``
  handing the rows (or the error) to the loop with ``loop.call_soon_threadsafe``, which sets an
  asyncio future the coroutine awaits, unless that future is already done (cancelled);
* ``everything_on+bridge``: ``pyfactories.enable(cluster)`` before ``connect()`` (every part on, as the
  profiler's ``everything_on`` configuration), the same bridge;
* ``everything_on+await``: the same enabled session, ``rows = await session.execute_async(...)``;
  unavailable (left out with a note) where the futures an enabled session hands out cannot be awaited;
* ``acsylla``: the peer driver's asyncio API (``clients.AcsyllaClient``).

Each client runs ``clients.measure_chains``: one coroutine for a sequential workload, else as many as
the workload has requests in flight, each awaiting its next query in turn. Its CPU is the process's
(all threads: the driver's IO thread too).
"""

from __future__ import annotations

import asyncio
import importlib
from dataclasses import dataclass
from typing import Any

from profiling.factories import EVERYTHING_ON, resolve
from profiling.harness.patterns import rows_in

from ..data import dataset
from . import configs as e2e_configs
from .clients import AcsyllaClient, Client, measure_chains
from .workloads import WORKLOADS, _params

#: The workloads an asyncio run measures by default: 1-row selects at 1 and 50 in flight, 200-row pages at
#: 50, prepared 10-column inserts at 1 and 50.
DEFAULT_WORKLOADS = ("single", "single50", "pages", "insert1", "insert50")
#: The loops a client process can run: the standard one, or uvloop's.
LOOPS = ("asyncio", "uvloop")
BRIDGE, AWAIT, PEER = "bridge", "await", "peer"


@dataclass(frozen=True)
class AsyncioConfig:
    """An asyncio configuration: its name (tables, JSON), whether pyfactories is enabled on its cluster,
    and how its coroutines get a request's rows (:data:`BRIDGE`, :data:`AWAIT`, or a :data:`PEER`'s API)."""

    name: str
    enabled: bool
    how: str
    words: str  # how the tables describe it
    factory: None = None  # no row factory of ours to apply: rows are tuples throughout

    @property
    def connection(self) -> str:
        """Its client's key: every configuration has a process of its own."""
        return self.name

    def runs(self, workload: str) -> bool:
        return workload in WORKLOADS


CONFIGS: dict[str, AsyncioConfig] = {c.name: c for c in (
    AsyncioConfig("driver+bridge", False, BRIDGE,
                  "the driver, tuple_factory, add_callbacks + call_soon_threadsafe into an asyncio future"),
    AsyncioConfig("everything_on+bridge", True, BRIDGE, "pyfactories.enable(cluster), tuple rows, the same bridge"),
    AsyncioConfig("everything_on+await", True, AWAIT,
                  "pyfactories.enable(cluster), tuple rows, await session.execute_async(...)"),
    AsyncioConfig("acsylla", False, PEER, "acsylla's asyncio API, rows as tuples"),
)}
REFERENCE = "driver+bridge"


def resolve_all(names: list[str] | None = None) -> list[AsyncioConfig]:
    """The reference first, then ``names`` (every configuration by default), each once."""
    unknown = [n for n in names or [] if n not in CONFIGS]
    if unknown:
        raise ValueError(f"unknown asyncio configuration(s) {', '.join(unknown)}; choose of {', '.join(CONFIGS)}")
    return [CONFIGS[n] for n in dict.fromkeys([REFERENCE, *(names or CONFIGS)])]


def usable(configs: list[AsyncioConfig]) -> tuple[list[AsyncioConfig], list[str]]:
    """``configs`` without a peer that does not import here, and a note for each one left out."""
    kept, notes = [], []
    for c in configs:
        why = e2e_configs.peer_unavailable(c.name) if c.how == PEER else None
        if why:
            notes.append(f"`{c.name}` skipped: {why}")
        else:
            kept.append(c)
    return kept, notes


def loop_unavailable(kind: str) -> str | None:
    """Why a client cannot run the loop ``kind`` here (None when it can)."""
    if kind not in LOOPS:
        return f"unknown loop {kind!r}; choose of {', '.join(LOOPS)}"
    if kind == "uvloop":
        try:
            importlib.import_module("uvloop")
        except ImportError as exc:
            return f"uvloop is not importable ({exc}); pip install uvloop"
    return None


def new_loop(kind: str) -> asyncio.AbstractEventLoop:
    """A new event loop of ``kind`` (:data:`LOOPS`)."""
    if kind == "uvloop":
        import uvloop

        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def _set_result(aio_future: asyncio.Future, rows: Any) -> None:
    if not aio_future.done():  # cancelled meanwhile: nobody awaits it any more
        aio_future.set_result(rows)


def _set_exception(aio_future: asyncio.Future, exc: BaseException) -> None:
    if not aio_future.done():
        aio_future.set_exception(exc)


def _rows_to_loop(rows: Any, loop: asyncio.AbstractEventLoop, aio_future: asyncio.Future) -> None:
    """The driver's callback (on its IO thread): the rows, handed to the loop."""
    loop.call_soon_threadsafe(_set_result, aio_future, rows)


def _error_to_loop(exc: BaseException, loop: asyncio.AbstractEventLoop, aio_future: asyncio.Future) -> None:
    loop.call_soon_threadsafe(_set_exception, aio_future, exc)


class DriverAsyncioClient:
    """A driver session (``tuple_factory``; enabled by pyfactories when ``config.enabled``) whose requests
    an asyncio loop awaits, through the bridge or directly (``config.how``)."""

    def __init__(self, hosts: list[str], port: int, config: AsyncioConfig, loop: asyncio.AbstractEventLoop) -> None:
        import pyfactories
        from cassandra.query import tuple_factory

        from profiling.cluster import Contact, open_cluster

        self.config, self.loop = config, loop
        self.cluster = open_cluster(Contact(hosts, port), row_factory=tuple_factory, **dataset.CONNECT_OPTIONS)
        if config.enabled:
            resolve(EVERYTHING_ON.name).before_connect(self.cluster)  # as the profiler does it
        try:
            self.session = self.cluster.connect()
        except BaseException:
            self.cluster.shutdown()
            raise
        self.prepared: dict[str, tuple[Any, list[tuple]]] = {}
        self.next_op: dict[str, int] = {}
        parts = pyfactories.status(self.session) if config.enabled else None
        on = f"; pyfactories on: {', '.join(n for n, p in parts.items() if p.on) or 'nothing'}" if parts else ""
        self.description = f"{self.cluster.connection_class.__name__}{on}; {config.how}"
        self.unavailable = self._why_not_awaitable() if config.how == AWAIT else None

    def _why_not_awaitable(self) -> str | None:
        """Why this session's futures cannot be awaited (None when they can): tried on one request."""
        future = self.session.execute_async("SELECT release_version FROM system.local")

        async def awaited() -> Any:
            return await future

        try:
            self.loop.run_until_complete(awaited())
        except TypeError as exc:
            return (f"the futures an enabled session hands out ({type(future).__name__}) cannot be awaited "
                    f"in this pyfactories ({exc})")
        finally:
            future.result()  # the request ends before the client measures anything
        return None

    def _prepare(self, workload: str) -> tuple[Any, list[tuple]]:
        if workload not in self.prepared:
            w = WORKLOADS[workload]
            for ddl in w.schema:
                self.session.execute(ddl, timeout=60.0)
            stmt = self.session.prepare(w.query)  # an enabled session's statements bind in C
            if w.fetch_size:
                stmt.fetch_size = w.fetch_size
            self.prepared[workload] = (stmt, _params(w.keys))
            self.next_op[workload] = 0
        return self.prepared[workload]

    def measure(self, workload: str, factory: str | None, n: int) -> tuple[float, float]:
        if self.unavailable:
            raise RuntimeError(f"{self.config.name} cannot measure here: {self.unavailable}")
        w = WORKLOADS[workload]
        stmt, params = self._prepare(workload)
        start = self.next_op[workload]
        self.next_op[workload] += n
        execute_async, loop, count = self.session.execute_async, self.loop, len(params)
        options = {} if w.request_timeout is None else {"timeout": w.request_timeout}

        def bridged(i: int) -> asyncio.Future:
            aio_future = loop.create_future()
            execute_async(stmt, params[i % count], **options).add_callbacks(
                _rows_to_loop, _error_to_loop, callback_args=(loop, aio_future), errback_args=(loop, aio_future))
            return aio_future

        def awaitable(i: int) -> Any:
            return execute_async(stmt, params[i % count], **options)

        request = awaitable if self.config.how == AWAIT else bridged
        return measure_chains(loop, w, range(start, start + n), request, rows_in, self.config.name)

    def close(self) -> None:
        self.cluster.shutdown()
        self.loop.close()


def make_client(name: str, hosts: list[str], port: int, loop: str = "asyncio") -> Client:
    """The client of the asyncio configuration ``name`` on a new loop of the kind ``loop``."""
    config = CONFIGS[name]
    if config.how == PEER:
        return AcsyllaClient(hosts, port, loop=new_loop(loop))
    return DriverAsyncioClient(hosts, port, config, new_loop(loop))
