"""The clients the end-to-end benchmark measures through, one per connection (``benchmarks.e2e.configs``).

A client runs ``n`` queries of a workload with a row factory and answers ``(CPU s, wall s)``:

* :class:`DriverClient`: a driver session (the driver's connection class or ours); the factory is
  applied to the session before each segment (``profiling.factories``);
* :class:`AcsyllaClient`: the acsylla driver through its asyncio API, its rows taken as tuples;
* :class:`Remote`: one of those in a process of its own (:func:`start`, or any client a ``make``
  function gives, as ``asyncio_clients`` does), asked through a pipe.

:func:`measure_chains` is how an asyncio client measures: coroutines awaiting the next query in turn.

Why processes: the connection class is per ``Cluster``, and a second cluster in the same process
would share the driver's libev loop, where the driver keeps each cancelled request timer (and its
request) for one timeout after the request ended: one connection's leftovers would be collected
during the other's segments. With a process per connection each pays for its own.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import os
import time
import traceback
from typing import Any, Awaitable, Callable, Protocol

from profiling.factories import resolve

from ..data import dataset
from ..harness.pinning import pin
from .workloads import MEASURE_TIMEOUT_S, WORKLOADS, QueriesFailed, Runner, Workload, _params


class Client(Protocol):
    description: str

    def measure(self, workload: str, factory: str | None, n: int) -> tuple[float, float]: ...

    def close(self) -> None: ...


class DriverClient:
    """A driver session; the driver's own connection class, or ours with ``ours``."""

    def __init__(self, session: Any, cluster: Any = None) -> None:
        self.session, self.cluster, self.runners = session, cluster, {}
        self.description = session.cluster.connection_class.__name__

    @classmethod
    def connect(cls, hosts: list[str], port: int, ours: bool) -> DriverClient:
        from profiling.cluster import Contact, connect
        from pyfactories import connection

        options = dict(dataset.CONNECT_OPTIONS, **(connection.cluster_options() if ours else {}))
        cluster, session = connect(Contact(hosts, port), **options)
        return cls(session, cluster)

    def measure(self, workload: str, factory: str | None, n: int) -> tuple[float, float]:
        if workload not in self.runners:
            w = WORKLOADS[workload]
            for ddl in w.schema:
                self.session.execute(ddl, timeout=60.0)
            self.runners[workload] = Runner(self.session, w)
        resolve(factory or "tuple").apply(self.session)
        cpu, wall, _ = self.runners[workload].measure(n, factory or "tuple")
        return cpu, wall

    def close(self) -> None:
        if self.cluster is not None:
            self.cluster.shutdown()


class AcsyllaClient:
    """acsylla (a Python driver over the DataStax C++ driver) through its asyncio API: a query at a
    time for sequential workloads, else ``in_flight`` coroutines taking the next query in turn, the
    way the driver's callback chains do; every row is taken as a tuple (``Row.as_tuple``)."""

    def __init__(self, hosts: list[str], port: int, loop: asyncio.AbstractEventLoop | None = None) -> None:
        import acsylla

        self.acsylla, self.loop = acsylla, loop or asyncio.new_event_loop()

        async def connect() -> Any:  # acsylla's cluster wants the running loop
            self.cluster = acsylla.create_cluster(hosts, port=port, log_level="error", connect_timeout=30.0,
                                                  request_timeout=dataset.CONNECT_OPTIONS["request_timeout"])
            return await self.cluster.create_session()

        self.session = self.loop.run_until_complete(connect())
        self.prepared: dict[str, tuple[Any, list[tuple]]] = {}
        self.next_op: dict[str, int] = {}
        from importlib.metadata import version

        self.description = f"acsylla {version('acsylla')}"

    def _prepare(self, workload: str) -> tuple[Any, list[tuple]]:
        if workload not in self.prepared:
            w = WORKLOADS[workload]
            for ddl in w.schema:
                self.loop.run_until_complete(self.session.execute(self.acsylla.create_statement(ddl, timeout=60.0)))
            stmt = self.loop.run_until_complete(self.session.create_prepared(w.query))
            self.prepared[workload] = (stmt, _params(w.keys))
            self.next_op[workload] = 0
        return self.prepared[workload]

    def measure(self, workload: str, factory: str | None, n: int) -> tuple[float, float]:
        w = WORKLOADS[workload]
        stmt, params = self._prepare(workload)
        start = self.next_op[workload]
        self.next_op[workload] += n
        timeout = w.request_timeout or dataset.CONNECT_OPTIONS["request_timeout"]
        execute = self.session.execute

        def request(i: int) -> Any:
            return execute(stmt.bind(list(params[i % len(params)]), page_size=w.fetch_size, timeout=timeout))

        return measure_chains(self.loop, w, range(start, start + n), request, _tuples_in, "acsylla")

    def close(self) -> None:
        self.loop.run_until_complete(self.session.close())
        self.loop.close()


def _tuples_in(result: Any) -> int:
    """How many rows an acsylla result has, each taken as a tuple."""
    return len([row.as_tuple() for row in result])


def measure_chains(loop: asyncio.AbstractEventLoop, w: Workload, ops: range, request: Callable[[int], Awaitable[Any]],
                   count: Callable[[Any], int], who: str) -> tuple[float, float]:
    """(CPU s of the whole process, wall s) of the queries ``ops`` of ``w`` on ``loop``: one coroutine for a
    sequential workload, else ``w.in_flight`` coroutines, each awaiting ``request(i)`` for the next ``i`` in
    turn (the way the driver's callback chains take them); ``count(result)`` gives a result's rows. Raises
    :class:`QueriesFailed` when queries failed, and if the rows are not ``len(ops)`` x the workload's."""
    pending = iter(ops)
    rows, errors = 0, []

    async def chain() -> None:
        nonlocal rows
        for i in pending:
            try:
                result = await request(i)
            except Exception as exc:  # noqa: BLE001 - counted, then raised as QueriesFailed
                errors.append(exc)
                return
            rows += count(result)

    async def run() -> None:
        chains = (chain() for _ in range(min(w.in_flight, len(ops))))
        await asyncio.wait_for(asyncio.gather(*chains), MEASURE_TIMEOUT_S)

    gc.collect()
    c0, w0 = time.process_time(), time.perf_counter()
    loop.run_until_complete(run())
    c1, w1 = time.process_time(), time.perf_counter()
    if errors:
        raise QueriesFailed(f"{w.id}/{who}: {len(errors)} queries failed, the first with "
                            f"{type(errors[0]).__name__}: {errors[0]}")
    if rows != len(ops) * w.rows:
        raise RuntimeError(f"{w.id}/{who}: {rows} rows for {len(ops)} queries, expected {len(ops) * w.rows}")
    return c1 - c0, w1 - w0


def make_client(connection: str, hosts: list[str], port: int) -> Client:
    """The client of a connection (``configs``): "driver", "ours" or a peer's name."""
    if connection in ("driver", "ours"):
        return DriverClient.connect(hosts, port, ours=connection == "ours")
    if connection == "acsylla":
        return AcsyllaClient(hosts, port)
    raise ValueError(f"no client for connection {connection!r}")


def _serve(pipe: Any, connection: str, hosts: list[str], port: int, client_cpus: list[int] | None,
           make: Callable[[str, list[str], int], Client]) -> None:
    """A worker process: pinned first (the driver's threads inherit it), then the client ``make`` gives
    (``("ready", description, why it cannot measure or None)``), then ``("measure", workload, factory, n)``
    answered with ``("done", cpu_s, wall_s)`` (or ``("failed", why)`` when queries failed) until ``("stop",)``."""
    try:
        pin([os.getpid()], client_cpus)
        client = make(connection, hosts, port)
        pipe.send(("ready", client.description, getattr(client, "unavailable", None)))
        while (msg := pipe.recv())[0] != "stop":
            try:
                pipe.send(("done", *client.measure(*msg[1:])))
            except QueriesFailed as exc:
                pipe.send(("failed", str(exc)))
        client.close()
        pipe.send(("stopped",))
    except BaseException:
        pipe.send(("error", traceback.format_exc()))


class Remote:
    """A client in a process of its own (started by :func:`start`)."""

    def __init__(self, connection: str, pipe: Any, proc: Any) -> None:
        self.connection, self.pipe, self.proc, self.description = connection, pipe, proc, "?"
        self.unavailable: str | None = None  # why its client cannot measure here (None when it can)

    def answer(self, expected: str) -> tuple:
        return self._check(self.pipe.recv(), expected)

    def _check(self, msg: tuple, expected: str) -> tuple:
        if msg[0] == "error":
            raise RuntimeError(f"the {self.connection!r} client process failed:\n{msg[1]}")
        if msg[0] != expected:
            raise RuntimeError(f"the {self.connection!r} client process answered {msg[0]!r}, not {expected!r}")
        return msg

    def measure(self, workload: str, factory: str | None, n: int) -> tuple[float, float]:
        self.pipe.send(("measure", workload, factory, n))
        msg = self.pipe.recv()
        if msg[0] == "failed":
            raise QueriesFailed(msg[1])
        _, cpu, wall = self._check(msg, "done")
        return cpu, wall

    def close(self) -> None:
        if self.proc.is_alive():
            try:
                self.pipe.send(("stop",))
                self.answer("stopped")
            except (OSError, EOFError, RuntimeError):
                pass
        self.proc.join(30)
        if self.proc.is_alive():
            self.proc.terminate()


def start(connections: list[str], hosts: list[str], port: int, client_cpus: list[int] | None,
          make: Callable[[str, list[str], int], Client] = make_client) -> dict[str, Remote]:
    """One process per connection, its client made by ``make`` (a module's function, or a ``partial`` of
    one: the process is spawned), started at once; returns when all are connected (closing them all if
    one fails)."""
    ctx = multiprocessing.get_context("spawn")
    remotes: dict[str, Remote] = {}
    try:
        for conn in connections:
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(child, conn, hosts, port, client_cpus, make), daemon=True)
            proc.start()
            remotes[conn] = Remote(conn, parent, proc)
        for remote in remotes.values():
            _, description, remote.unavailable = remote.answer("ready")
            remote.description = description + " (a process of its own)"
    except BaseException:
        for remote in remotes.values():
            remote.close()
        raise
    return remotes
