"""The compiled framing of ``pyfactories.connection`` through a real server, protocol v5 (segments)
and v4 (frames): the same rows, errors and pages as the driver's own connection class."""

from __future__ import annotations

import random

import pytest
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.io.libevreactor import LibevConnection
from cassandra.query import SimpleStatement, named_tuple_factory

from profiling.cluster import connect
from pyfactories import connection
from pyfactories import decoding

from .support import pool_connections

pytestmark = pytest.mark.integration

KEYSPACE = "readpath"  # this module's own keyspace
ROWS = 5000
BLOB = 300
CLASSES = {"driver": LibevConnection, "ours": connection.TimerQueueLibevConnection}


def _blob(i: int) -> bytes:
    return random.Random(i).randbytes(BLOB)


@pytest.fixture(scope="module", params=[5, 4], ids=["v5", "v4"])
def sessions(request, contact):
    """{"driver": session, "ours": session} at one protocol version, the rows in place."""
    out, clusters = {}, []
    for name, cls in CLASSES.items():
        cluster, session = connect(contact, connection_class=cls, protocol_version=request.param,
                                   row_factory=named_tuple_factory, compression=False)
        clusters.append(cluster)
        out[name] = session
    session = out["ours"]
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}", timeout=60)
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.blobs (k int, c int, v blob, t text, "
                    "PRIMARY KEY (k, c))", timeout=60)
    if session.execute(f"SELECT c FROM {KEYSPACE}.blobs WHERE k = 1 AND c = {ROWS - 1}").one() is None:
        insert = session.prepare(f"INSERT INTO {KEYSPACE}.blobs (k, c, v, t) VALUES (1, ?, ?, ?)")
        execute_concurrent_with_args(session, insert, [(i, _blob(i), f"row {i}") for i in range(ROWS)],
                                     concurrency=100, raise_on_first_error=True)
    yield out
    for cluster in clusters:
        cluster.shutdown()


def _connections(session):
    return pool_connections(session)


def test_our_connections_use_the_compiled_framing(sessions):
    version = sessions["ours"].cluster.protocol_version
    for conn in _connections(sessions["ours"]):
        assert type(conn) is connection.TimerQueueLibevConnection
        assert conn._is_checksumming_enabled == (version >= 5)
        if version >= 5:
            assert type(conn._segment_codec) is connection.framing.SegmentCodec


def test_a_page_of_many_segments_same_rows(sessions):
    """One page of 5,000 rows of 300-byte blobs: about 1.6 MB, a frame cut across 13 segments or more."""
    query = SimpleStatement(f"SELECT * FROM {KEYSPACE}.blobs WHERE k = 1", fetch_size=ROWS + 1)
    got = {name: session.execute(query) for name, session in sessions.items()}
    rows = {name: list(rs.current_rows) for name, rs in got.items()}
    assert len(rows["ours"]) == ROWS and not got["ours"].has_more_pages
    assert rows["ours"] == rows["driver"]
    assert [r.v for r in rows["ours"][:3]] == [_blob(i) for i in range(3)]
    assert sum(len(r.v) for r in rows["ours"]) > 10 * (128 * 1024)


def test_execute_concurrent_same_rows(sessions):
    results = {}
    for name, session in sessions.items():
        select = session.prepare(f"SELECT c, v, t FROM {KEYSPACE}.blobs WHERE k = 1 AND c = ?")
        out = execute_concurrent_with_args(session, select, [(i,) for i in range(0, ROWS, 7)], concurrency=200,
                                           raise_on_first_error=True)
        results[name] = [list(r.result_or_exc) for r in out]
    assert results["ours"] == results["driver"]
    assert [rows[0].c for rows in results["ours"]] == list(range(0, ROWS, 7))


def test_the_fast_path_on_top(sessions, contact):
    if not decoding.AVAILABLE:
        pytest.fail(f"the fast path is off in this build: {decoding.UNAVAILABLE_REASON}")
    version = sessions["ours"].cluster.protocol_version
    cluster, session = connect(contact, protocol_version=version, compression=False, **connection.cluster_options())
    try:
        assert decoding.enable(session, rows="named")
        query = SimpleStatement(f"SELECT * FROM {KEYSPACE}.blobs WHERE k = 1", fetch_size=ROWS + 1)
        mine = list(session.execute(query).current_rows)
        theirs = list(sessions["driver"].execute(query).current_rows)
        assert [tuple(r) for r in mine] == [tuple(r) for r in theirs]
        assert mine[0]._fields == theirs[0]._fields
    finally:
        cluster.shutdown()


def test_a_node_side_error_is_the_drivers(sessions):
    errors = {}
    for name, session in sessions.items():
        with pytest.raises(Exception) as info:
            session.execute(f"SELEC * FROM {KEYSPACE}.blobs")
        errors[name] = info.value
    assert type(errors["ours"]) is type(errors["driver"])
    assert str(errors["ours"]) == str(errors["driver"])
    for session in sessions.values():  # and the connection keeps working
        assert session.execute(f"SELECT c FROM {KEYSPACE}.blobs WHERE k = 1 AND c = 0").one().c == 0
    assert not any(conn.is_defunct for conn in _connections(sessions["ours"]))


def test_the_asyncio_class_same_rows(sessions, contact):
    version = sessions["ours"].cluster.protocol_version
    cluster, session = connect(contact, connection_class=connection.TimerQueueAsyncioConnection,
                               protocol_version=version, row_factory=named_tuple_factory, compression=False)
    try:
        assert all(type(c) is connection.TimerQueueAsyncioConnection for c in _connections(session))
        query = SimpleStatement(f"SELECT * FROM {KEYSPACE}.blobs WHERE k = 1", fetch_size=ROWS + 1)
        assert list(session.execute(query).current_rows) == list(sessions["driver"].execute(query).current_rows)
    finally:
        cluster.shutdown()
