"""Prepared statements bound by pyfactories (``pyfactories.enable``) through a real server: rows of every CQL
type written by our bind read back equal to the same rows written by the driver's, with the driver's
routing keys (so token-aware routing sends them to the same replicas)."""

from __future__ import annotations

import datetime
import time
import uuid
from decimal import Decimal

import pytest
from cassandra.query import BoundStatement, PreparedStatement, tuple_factory
from cassandra.util import Duration

from profiling.cluster import connect
import pyfactories
from pyfactories import binding

from ..bind_values import Address
from .support import refresh_schema

pytestmark = pytest.mark.integration

KEYSPACE = "binding"  # this module's own keyspace
COLUMNS = {
    "c_ascii": "ascii", "c_bigint": "bigint", "c_blob": "blob", "c_boolean": "boolean", "c_date": "date",
    "c_decimal": "decimal", "c_double": "double", "c_duration": "duration", "c_float": "float", "c_inet": "inet",
    "c_int": "int", "c_smallint": "smallint", "c_text": "text", "c_varchar": "varchar", "c_time": "time",
    "c_timestamp": "timestamp", "c_timeuuid": "timeuuid", "c_tinyint": "tinyint", "c_uuid": "uuid",
    "c_varint": "varint", "c_list": "list<int>", "c_set": "set<text>", "c_map": "map<text, int>",
    "c_frozen_list": "frozen<list<text>>", "c_tuple": "tuple<int, text, double>", "c_udt": "frozen<address>",
    "c_vector": "vector<float, 3>", "c_vector_text": "vector<text, 2>",
}  # fmt: skip
ROWS = [
    ["ascii", 2**62, b"\x00\xffblob", True, datetime.date(2024, 2, 29), Decimal("12345.6789"), 3.141592653589793,
     Duration(1, 2, 3_000_000_000), 1.5, "192.168.1.10", -(2**31), 32767, "ünï ✓ 🐍", "varchar",
     datetime.time(13, 14, 15, 123456), datetime.datetime(2024, 1, 2, 3, 4, 5, 678000), uuid.uuid1(), -128,
     uuid.uuid4(), 123456789012345678901234567890, [1, 2, 3], {"a", "b"}, {"x": 1}, ["p", "q"], (1, "t", 2.5),
     Address("street", 75001), [1.0, 2.5, -3.25], ["v", "w"]],
    ["", -(2**63), b"", False, datetime.date(1970, 1, 1), Decimal("-0.001"), -0.0, Duration(0, 0, 1), 3.4e38,
     "::1", 0, -32768, "", "", datetime.time(0, 0), datetime.datetime(1900, 12, 31, 23, 59, 59, 999999),
     uuid.uuid1(), 127, uuid.UUID(int=0), -(2**70), [], set(), {}, [], (0, "", 0.0), Address("", 0),
     [0.0, 0.0, 0.0], ["", ""]],
    [None] * len(COLUMNS),
]  # fmt: skip
INSERT = (f"INSERT INTO {KEYSPACE}.every_type (pk, pk2, ck, {', '.join(COLUMNS)}) "
          f"VALUES (?, ?, ?, {', '.join('?' * len(COLUMNS))})")


@pytest.fixture(scope="module", params=[5, 4], ids=["v5", "v4"])
def sessions(request, contact):
    """``(ours, the driver's)``: a session with the fast path on (our bind) and one without, same protocol."""
    clusters = []
    try:
        found = []
        for fast in (True, False):
            cluster, session = connect(contact, protocol_version=request.param, row_factory=tuple_factory)
            clusters.append(cluster)
            if fast:
                assert pyfactories.enable(session, connection=False)["binds"].on
            found.append(session)
        ours = found[0]
        ours.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                     "{'class': 'SimpleStrategy', 'replication_factor': 1}", timeout=60)
        ours.execute(f"CREATE TYPE IF NOT EXISTS {KEYSPACE}.address (street text, zip int)", timeout=60)
        columns = ", ".join(f"{name} {cql}" for name, cql in COLUMNS.items())
        ours.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.every_type (pk int, pk2 text, ck int, {columns}, "
                     "PRIMARY KEY ((pk, pk2), ck))", timeout=60)
        ours.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.counts (k bigint PRIMARY KEY, c counter)", timeout=60)
        for session in found:
            refresh_schema(session.cluster)
        yield tuple(found)
    finally:
        for cluster in clusters:
            cluster.shutdown()


def test_rows_of_every_type_written_by_our_bind_read_back_as_the_drivers(sessions):
    ours, driver = sessions
    mine, theirs = ours.prepare(INSERT), driver.prepare(INSERT)
    assert type(mine) is binding.FastBindPreparedStatement and type(theirs) is PreparedStatement
    pk = time.time_ns() % 2**31
    for ck, row in enumerate(ROWS):
        ours.execute(mine, [pk, "ours", ck, *row])
        ours.execute_async(mine, {"pk": pk, "pk2": "ours-by-name", "ck": ck, **dict(zip(COLUMNS, row))}).result()
        driver.execute(theirs, [pk, "driver", ck, *row])
    select = f"SELECT ck, {', '.join(COLUMNS)} FROM {KEYSPACE}.every_type WHERE pk = %s AND pk2 = %s"
    read = {pk2: list(driver.execute(select, (pk, pk2))) for pk2 in ("ours", "ours-by-name", "driver")}
    assert len(read["driver"]) == len(ROWS)
    assert read["ours"] == read["driver"] and read["ours-by-name"] == read["driver"]


def test_our_bound_statements_route_as_the_drivers(sessions):
    ours, driver = sessions
    mine = ours.prepare(INSERT)
    token_map = ours.cluster.metadata.token_map
    for ck, row in enumerate(ROWS[:2]):
        values = [ck + 7, f"key-{ck}", ck, *row]
        bound, reference = mine.bind(values), BoundStatement(driver.prepare(INSERT)).bind(values)
        assert bound.values == reference.values and bound.routing_key == reference.routing_key
        token = token_map.token_class.from_key(bound.routing_key)
        assert token_map.get_replicas(KEYSPACE, token) == token_map.get_replicas(
            KEYSPACE, token_map.token_class.from_key(reference.routing_key))
        policy = ours.cluster.profile_manager.default.load_balancing_policy
        assert list(policy.make_query_plan(KEYSPACE, bound))[:1] == token_map.get_replicas(KEYSPACE, token)[:1]


def test_counters_and_errors_through_the_session(sessions):
    ours, driver = sessions
    update = f"UPDATE {KEYSPACE}.counts SET c = c + ? WHERE k = ?"
    mine, theirs = ours.prepare(update), driver.prepare(update)
    key = time.time_ns()
    ours.execute(mine, [5, key])
    ours.execute(mine, (2**40, key))
    assert list(driver.execute(f"SELECT c FROM {KEYSPACE}.counts WHERE k = %s", [key])) == [(5 + 2**40,)]
    for bad in ([2**63, key], ["5", key], [5], [5, key, 1]):
        with pytest.raises(Exception) as found:
            ours.execute(mine, bad)
        with pytest.raises(Exception) as expected:
            driver.execute(theirs, bad)
        assert (type(found.value), str(found.value)) == (type(expected.value), str(expected.value))


def test_disable_gives_the_session_the_drivers_prepare_again(sessions):
    ours, _ = sessions
    pyfactories.disable(ours)
    try:
        assert type(ours.prepare(INSERT)) is PreparedStatement
    finally:
        assert pyfactories.enable(ours, connection=False).all_on is False  # the connection was not asked for
        assert pyfactories.status(ours)["binds"].on
    assert type(ours.prepare(INSERT)) is binding.FastBindPreparedStatement


def test_the_end_to_end_benchmark_measures_both_binds(contact):
    from benchmarks import bench_bind

    found = bench_bind.end_to_end(contact, **bench_bind.E2E_SIZES["tiny"])
    assert len(found["cpu_us"]["driver"]) == len(found["cpu_us"]["ours"]) == found["rounds"]
    assert all(v > 0 for v in found["cpu_us"]["driver"] + found["cpu_us"]["ours"])
    assert found["range"][0] <= found["ratio"] <= found["range"][1]
    assert "End to end (200 INSERTs" in bench_bind.render({**bench_bind.run(bench_bind.default_spec("tiny"),
                                                                             say=lambda _m: None), "end_to_end": found})
