"""The service's data: a keyspace of its own, made (and filled) at start-up if it is not there yet, and
the four requests the endpoints make, in two ways that give the same rows.

* :class:`BridgedStore`: the driver as it comes, its requests handed to the loop by the usual
  hand-written bridge (``execute_async`` + ``add_callbacks`` + ``loop.call_soon_threadsafe`` into an
  asyncio future);
* :class:`AwaitedStore`: ``pyfactories.enable(cluster)`` before ``connect()``, then
  ``await session.execute_async(...)`` and ``async for`` over the result.

Rows are the driver's default, named tuples, in both.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import AsyncIterator
from typing import Any

from cassandra.cluster import (EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, ResponseFuture, ResultSet,
                               default_lbp_factory)
from cassandra.concurrent import execute_concurrent_with_args

KEYSPACE = "asyncio_service"
#: Sensors 0..SEEDED_SENSORS-1 hold READINGS_PER_SENSOR readings each from the start; the load
#: generator writes to sensors from WRITTEN_SENSORS on, so what the reads see never changes.
SEEDED_SENSORS = 20
READINGS_PER_SENSOR = 200
WRITTEN_SENSORS = 1000
#: rows per page of a partition read: a 200-row partition comes in 4 pages
PAGE_SIZE = 50

SCHEMA = (
    f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
    "{'class': 'SimpleStrategy', 'replication_factor': 1}",
    f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.readings "
    "(sensor int, seq int, value double, note text, PRIMARY KEY (sensor, seq))",
)
QUERIES = {
    "one": f"SELECT sensor, seq, value, note FROM {KEYSPACE}.readings WHERE sensor = ? AND seq = ?",
    "partition": f"SELECT sensor, seq, value, note FROM {KEYSPACE}.readings WHERE sensor = ?",
    "count": f"SELECT count(*) AS readings FROM {KEYSPACE}.readings WHERE sensor = ?",
    "insert": f"INSERT INTO {KEYSPACE}.readings (sensor, seq, value, note) VALUES (?, ?, ?, ?)",
}


def seeded_reading(sensor: int, seq: int) -> tuple[int, int, float, str]:
    return sensor, seq, sensor * 1000 + seq / 4, f"reading {seq} of sensor {sensor}"


def open_session(hosts: list[str], port: int, use_pyfactories: bool) -> tuple[Cluster, Any]:
    """A connected session (``pyfactories.enable`` on its cluster first when asked), its keyspace made
    and filled if it is not yet."""
    profile = ExecutionProfile(load_balancing_policy=default_lbp_factory())  # the driver's default, said
    cluster = Cluster(hosts, port=port, protocol_version=5, execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    if use_pyfactories:
        import pyfactories

        pyfactories.enable(cluster)
    try:
        session = cluster.connect()
        create_schema(session)
    except BaseException:
        cluster.shutdown()
        raise
    return cluster, session


def create_schema(session: Any) -> None:
    """The keyspace, its table and the seeded readings; a second start finds them and adds nothing."""
    for statement in SCHEMA:
        session.execute(statement, timeout=60)
    last = SEEDED_SENSORS - 1
    count = session.execute(QUERIES["count"].replace("?", str(last))).one().readings
    if count == READINGS_PER_SENSOR:
        return
    insert = session.prepare(QUERIES["insert"])
    rows = [seeded_reading(s, q) for s in range(SEEDED_SENSORS) for q in range(READINGS_PER_SENSOR)]
    execute_concurrent_with_args(session, insert, rows, concurrency=64, raise_on_first_error=True)


class Store(abc.ABC):
    """The endpoints' requests on one session: prepared once, each an ``async`` method."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.prepared = {name: session.prepare(query) for name, query in QUERIES.items()}
        self.prepared["partition"].fetch_size = PAGE_SIZE

    @abc.abstractmethod
    async def _execute(self, name: str, params: tuple) -> ResultSet:
        """The driver's ``ResultSet`` of one prepared request (its first page)."""

    @abc.abstractmethod
    def _rows(self, name: str, params: tuple) -> AsyncIterator[Any]:
        """Every row of one prepared request, page after page."""

    async def reading(self, sensor: int, seq: int) -> Any:
        return (await self._execute("one", (sensor, seq))).one()

    async def partition(self, sensor: int) -> list[Any]:
        return [row async for row in self._rows("partition", (sensor,))]

    async def count(self, sensor: int) -> int:
        return (await self._execute("count", (sensor,))).one().readings

    async def insert(self, sensor: int, seq: int, value: float, note: str) -> None:
        await self._execute("insert", (sensor, seq, value, note))


class AwaitedStore(Store):
    """A session ``pyfactories.enable`` enabled: its requests are awaited as they are."""

    async def _execute(self, name: str, params: tuple) -> ResultSet:
        return await self.session.execute_async(self.prepared[name], params)

    async def _rows(self, name: str, params: tuple) -> AsyncIterator[Any]:
        result = await self.session.execute_async(self.prepared[name], params)
        async for row in result:  # each next page fetched without blocking the loop
            yield row


class BridgedStore(Store):
    """The driver's session, through the hand-written bridge."""

    async def _execute(self, name: str, params: tuple) -> ResultSet:
        future = self.session.execute_async(self.prepared[name], params)
        return ResultSet(future, await to_loop(future))

    async def _rows(self, name: str, params: tuple) -> AsyncIterator[Any]:
        future = self.session.execute_async(self.prepared[name], params)
        page = await to_loop(future)
        while True:
            for row in page:
                yield row
            if not future.has_more_pages:
                return
            future.clear_callbacks()  # the driver calls a future's callbacks again for each page
            future.start_fetching_next_page()
            page = await to_loop(future)


def to_loop(future: ResponseFuture) -> asyncio.Future:
    """The usual bridge: an asyncio future of the running loop, finished from the driver's IO thread
    through ``call_soon_threadsafe`` with the request's rows (one page of them) or its error."""
    loop = asyncio.get_running_loop()
    waiter = loop.create_future()
    future.add_callbacks(_hand_rows, _hand_error, callback_args=(loop, waiter), errback_args=(loop, waiter))
    return waiter


def _hand_rows(rows: Any, loop: asyncio.AbstractEventLoop, waiter: asyncio.Future) -> None:
    loop.call_soon_threadsafe(_finish, waiter, rows, None)


def _hand_error(error: BaseException, loop: asyncio.AbstractEventLoop, waiter: asyncio.Future) -> None:
    loop.call_soon_threadsafe(_finish, waiter, None, error)


def _finish(waiter: asyncio.Future, rows: Any, error: BaseException | None) -> None:
    if waiter.done():  # its task was cancelled: nobody awaits it any more
        return
    if error is None:
        waiter.set_result(rows)
    else:
        waiter.set_exception(error)

