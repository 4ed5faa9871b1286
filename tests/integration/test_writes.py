"""Coalesced writes of ``pyfactories.connection.TimerQueueLibevConnection`` through a real server:
many requests in flight from several threads, requests larger than one write among small ones, the
fast path on top, and a shutdown with writes still queued; rows read back exactly."""

from __future__ import annotations

import random
import threading
import time

import pytest
from cassandra.cluster import NoHostAvailable
from cassandra.io.libevreactor import LibevConnection
from cassandra.query import SimpleStatement, named_tuple_factory

from profiling.cluster import Contact, connect
from pyfactories import connection
from pyfactories import decoding
from pyfactories.connection._writes_py import CoalescedAsyncioWrites, CoalescedWrites

from .proxy import self_signed_tls_proxy
from .support import pool_connections

pytestmark = pytest.mark.integration

KEYSPACE = "coalesce"  # this module's own keyspace
CLASSES = {"libev": connection.TimerQueueLibevConnection, "asyncio": connection.TimerQueueAsyncioConnection}
MIXINS = {"libev": CoalescedWrites, "asyncio": CoalescedAsyncioWrites}
WAIT_S = 120.0


def _queued(conn) -> int:
    return len(conn.deque if isinstance(conn, CoalescedWrites) else conn._out)


@pytest.fixture(scope="module", params=[("libev", 5), ("libev", 4), ("asyncio", 5)],
                ids=["libev-v5", "libev-v4", "asyncio-v5"])
def session(request, contact):
    kind, version = request.param
    cluster, session = connect(contact, connection_class=CLASSES[kind], protocol_version=version,
                               row_factory=named_tuple_factory, compression=False)
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}", timeout=60)
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.rows (run text, k int, v text, b blob, "
                    "PRIMARY KEY (run, k))", timeout=60)
    session.coalesce_kind = kind
    yield session
    cluster.shutdown()


def _run_id(session, label: str) -> str:
    return f"{label}-v{session.cluster.protocol_version}-{time.time_ns()}"


def _value(run: str, k: int) -> str:
    return f"{run}:{k}:" + "v" * (k % 37)


class InFlight:
    """At most ``limit`` requests of one thread in flight; errors kept."""

    def __init__(self, limit: int) -> None:
        self.slots = threading.Semaphore(limit)
        self.errors: list[BaseException] = []
        self.done = 0
        self.lock = threading.Lock()

    def send(self, session, statement, params) -> None:
        self.slots.acquire()
        future = session.execute_async(statement, params)
        future.add_callbacks(self._ok, self._failed)

    def _ok(self, _rows) -> None:
        with self.lock:
            self.done += 1
        self.slots.release()

    def _failed(self, exc) -> None:
        with self.lock:
            self.errors.append(exc)
            self.done += 1
        self.slots.release()


def _insert_from_threads(session, insert, rows_by_thread: list[list[tuple]], per_thread: int) -> None:
    trackers = [InFlight(per_thread) for _ in rows_by_thread]

    def work(tracker: InFlight, rows: list[tuple]) -> None:
        for params in rows:
            tracker.send(session, insert, params)

    threads = [threading.Thread(target=work, args=(t, rows)) for t, rows in zip(trackers, rows_by_thread)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S)
    deadline = time.monotonic() + WAIT_S
    total = sum(len(rows) for rows in rows_by_thread)
    while sum(t.done for t in trackers) < total and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sum(t.done for t in trackers) == total
    assert [e for t in trackers for e in t.errors] == []


def _read_back(session, run: str) -> dict[int, tuple]:
    query = SimpleStatement(f"SELECT k, v, b FROM {KEYSPACE}.rows WHERE run = %s", fetch_size=1000)
    return {r.k: (r.v, r.b) for r in session.execute(query, (run,), timeout=60)}


def test_our_class_coalesces(session):
    conns = pool_connections(session)
    kind = session.coalesce_kind
    assert conns and all(type(c) is CLASSES[kind] and isinstance(c, MIXINS[kind]) for c in conns)


def test_5000_inserts_1000_in_flight_from_4_threads(session):
    run = _run_id(session, "many")
    insert = session.prepare(f"INSERT INTO {KEYSPACE}.rows (run, k, v) VALUES (?, ?, ?)")
    rows = [(run, k, _value(run, k)) for k in range(5000)]
    _insert_from_threads(session, insert, [rows[t::4] for t in range(4)], per_thread=250)
    got = _read_back(session, run)
    assert got == {k: (_value(run, k), None) for k in range(5000)}


def test_large_requests_among_small_ones(session):
    """1 MB blobs (larger than one write: sent in slices) interleaved with small rows, 2 threads."""
    run = _run_id(session, "large")
    insert = session.prepare(f"INSERT INTO {KEYSPACE}.rows (run, k, v, b) VALUES (?, ?, ?, ?)")
    big = {k: random.Random(k).randbytes(1 << 20) for k in range(0, 600, 50)}
    assert len(next(iter(big.values()))) > CLASSES[session.coalesce_kind].max_write_size
    rows = [(run, k, _value(run, k), big.get(k)) for k in range(600)]
    _insert_from_threads(session, insert, [rows[0::2], rows[1::2]], per_thread=100)
    got = _read_back(session, run)
    assert got == {k: (_value(run, k), big.get(k)) for k in range(600)}


def test_fast_path_on_top_same_rows_as_the_driver(session, contact):
    run = _run_id(session, "fast")
    insert = session.prepare(f"INSERT INTO {KEYSPACE}.rows (run, k, v) VALUES (?, ?, ?)")
    _insert_from_threads(session, insert, [[(run, k, _value(run, k)) for k in range(t, 1000, 2)] for t in (0, 1)],
                         per_thread=200)
    cluster, driver = connect(contact, connection_class=LibevConnection,
                              protocol_version=session.cluster.protocol_version,
                              row_factory=named_tuple_factory, compression=False)
    try:
        results = {}
        for name, s in (("ours", session), ("driver", driver)):
            if name == "ours":
                assert decoding.enable(s, rows="named"), decoding.UNAVAILABLE_REASON
            select = s.prepare(f"SELECT k, v FROM {KEYSPACE}.rows WHERE run = ? AND k = ?")
            futures = [s.execute_async(select, (run, k)) for k in range(1000)]
            results[name] = [tuple(r) for f in futures for r in f.result()]
        assert results["ours"] == results["driver"] == [(k, _value(run, k)) for k in range(1000)]
    finally:
        cluster.shutdown()


@pytest.mark.parametrize("kind", CLASSES)
def test_shutdown_with_writes_pending_returns_and_every_request_ends(contact, kind):
    cluster, session = connect(contact, connection_class=CLASSES[kind], protocol_version=5, compression=False)
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.rows (run text, k int, v text, b blob, "
                    "PRIMARY KEY (run, k))", timeout=60)
    insert = session.prepare(f"INSERT INTO {KEYSPACE}.rows (run, k, b) VALUES (?, ?, ?)")
    blob = bytes(1 << 20)
    conns = pool_connections(session)
    ended = threading.Semaphore(0)
    futures = []
    for k in range(256):  # 64 at least, more while a busy machine's IO thread has already sent them all
        future = session.execute_async(insert, ("shutdown", k, blob))
        future.add_callbacks(lambda _r: ended.release(), lambda _e: ended.release())
        futures.append(future)
        if k >= 63 and sum(_queued(c) for c in conns) > 0:
            break
    queued = sum(_queued(c) for c in conns)
    t0 = time.monotonic()
    cluster.shutdown()
    took = time.monotonic() - t0
    assert queued > 0  # writes were still waiting when the shutdown began
    assert took < 10.0
    deadline = time.monotonic() + 30.0
    for _ in futures:
        assert ended.acquire(timeout=max(deadline - time.monotonic(), 0.0))
    assert all(f._event.is_set() for f in futures)  # result() would return or raise now
    assert all(c.is_closed for c in conns)


SCHEMA_TABLES = "SELECT keyspace_name, table_name FROM system_schema.tables WHERE keyspace_name = 'system_schema'"


def _tls_outcome(proxy, context, cls) -> object:
    """The rows of a query through the TLS proxy on connection class ``cls``, or how connecting failed."""
    try:
        cluster, session = connect(Contact(["127.0.0.1"], proxy.port), connection_class=cls, protocol_version=5,
                                   ssl_context=context, connect_timeout=3, row_factory=named_tuple_factory)
    except NoHostAvailable as exc:
        return sorted({type(e).__name__ for e in exc.errors.values()})
    try:
        return sorted(tuple(r) for r in session.execute(SCHEMA_TABLES))
    finally:
        cluster.shutdown()


def test_asyncio_with_tls_is_the_drivers(contact, tmp_path):
    """scylla-driver's asyncio connection speaks TLS through an asyncio transport, and ours keeps the
    driver's writes there: the same rows. cassandra-driver's cannot (its writer gives asyncio's
    ``sock_sendall`` the TLS socket, which it refuses): ours fails as it does."""
    from cassandra.io.asyncioreactor import AsyncioConnection

    proxy, context = self_signed_tls_proxy(contact.hosts[0], contact.port, tmp_path)
    try:
        outcomes = {kind: _tls_outcome(proxy, context, cls)
                    for kind, cls in (("driver", AsyncioConnection), ("ours", CLASSES["asyncio"]))}
    finally:
        proxy.close()
    assert outcomes["ours"] == outcomes["driver"]
    if hasattr(AsyncioConnection, "_setup_ssl_and_run"):  # the driver's TLS transport: rows through it
        assert len(outcomes["ours"]) > 5 and all(isinstance(r, tuple) for r in outcomes["ours"])
