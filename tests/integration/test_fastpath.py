"""The fast path (``pyfactories.decoding``) through a real server: its rows equal the rows of the
driver's ``named_tuple_factory`` / ``dict_factory`` read the driver's way, for every CQL type of the
table, through simple and prepared statements, paging (automatic and manual), execute_async and
execute_concurrent, on protocols v4 and v5, whichever of the factories routed to those rows the session
itself is configured with (``FAST_CONFIGS``). Per-request profiles naming other factories: test_fastpath_routes.
"""

import pytest
from cassandra import DriverException, protocol
from cassandra.cluster import EXEC_PROFILE_DEFAULT
from cassandra.policies import ColumnEncryptionPolicy
from cassandra.query import SimpleStatement, dict_factory, named_tuple_factory, ordered_dict_factory

from pyfactories import _driver
from pyfactories import decoding

from .support import (
    ALL_TYPES,
    FAST_CONFIGS,
    BIG_ROWS,
    KS,
    METHODS,
    Source,
    Target,
    assert_same_fetch,
    assert_same_rows,
    fetch,
    values_of,
)

pytestmark = pytest.mark.integration

ROWS = ["named", "dict"]
PROTOCOLS = [5, 4]


def assert_row_kind(rows, kind):
    assert rows
    for row in rows:
        if kind == "named":
            assert isinstance(row, tuple) and type(row).__name__ == "Row" and hasattr(type(row), "_fields")
        else:
            assert type(row) is dict


def test_fastpath_is_available():
    """The suite runs the compiled fast path; if it could not load, this says why (no silent driver path)."""
    assert decoding.AVAILABLE, decoding.UNAVAILABLE_REASON


@pytest.mark.parametrize("protocol_version", PROTOCOLS, ids=lambda p: f"v{p}")
@pytest.mark.parametrize("config", FAST_CONFIGS)
@pytest.mark.parametrize("method", METHODS + ["manual_paging"])
@pytest.mark.parametrize("rows", ROWS)
def test_rows_equal_driver_rows(clusters, schema, rows, method, config, protocol_version):
    fast = clusters.fast_target(protocol_version, config, rows)
    driver = clusters.driver(protocol_version, rows)
    for source in (ALL_TYPES, schema.counters):
        ours = fetch(fast, method, source)
        assert_row_kind(ours.rows, rows)
        assert_same_fetch(ours, fetch(driver, method, source))


@pytest.mark.parametrize("rows", ROWS)
def test_a_per_call_profile_names_the_rows(clusters, rows):
    """A profile passed to execute decides, not the session's: the driver's ordered_dict_factory keeps the
    driver's path, the driver's named_tuple_factory gets the rows ``enable`` was given."""
    fast = clusters.fast_target(5, "profile", rows).session  # its default profile names our factory of ``rows``
    # a clone of the default profile (an unregistered profile's load balancing policy knows no hosts)
    for factory, kind in ((ordered_dict_factory, "ordered"), (named_tuple_factory, rows)):
        other = fast.execution_profile_clone_update(EXEC_PROFILE_DEFAULT, row_factory=factory)
        for method in ("simple", "prepared", "execute_async", "concurrent"):
            got = fetch(Target(fast, {"execution_profile": other}), method)
            assert_same_fetch(got, fetch(clusters.driver(5, kind), method))


@pytest.mark.parametrize("protocol_version", PROTOCOLS, ids=lambda p: f"v{p}")
def test_disable_gives_back_the_drivers_path(clusters, protocol_version):
    # A session whose default profile names our ordered_dict_factory (c implementation).
    session = clusters.shared_cluster(protocol_version, "default", "c.ordered").connect()
    target = Target(session)
    ordered = clusters.target(protocol_version, "default", "c.ordered")
    before = fetch(target, "prepared_paged")
    assert type(before.rows[0]).__name__ == "OrderedDict"
    assert not decoding.is_enabled(session)

    assert decoding.enable(session, rows="named")
    assert decoding.is_enabled(session)
    assert session.client_protocol_handler is protocol.ProtocolHandler  # requests are routed one by one
    # our ordered_dict_factory is kept, and fed tuples the fast path decoded
    decoded = sum(decoding.cache_info()["tuple"])
    assert_same_fetch(fetch(target, "prepared_paged"), fetch(ordered, "prepared_paged"))
    assert sum(decoding.cache_info()["tuple"]) > decoded
    named = session.execution_profile_clone_update(EXEC_PROFILE_DEFAULT, row_factory=named_tuple_factory)
    assert_same_fetch(fetch(Target(session, {"execution_profile": named}), "prepared_paged"),
                      fetch(clusters.driver(protocol_version, "named"), "prepared_paged"))

    assert decoding.enable(session, rows="dict")  # switching kinds
    assert len(session._request_init_callbacks) == 1
    assert_same_fetch(fetch(Target(session, {"execution_profile": named}), "prepared_paged"),
                      fetch(clusters.driver(protocol_version, "dict"), "prepared_paged"))

    decoding.disable(session)
    assert not decoding.is_enabled(session)
    assert session.client_protocol_handler is protocol.ProtocolHandler
    assert "client_protocol_handler" not in vars(session)
    assert not session._request_init_callbacks  # the listener is gone
    for method in ("simple", "prepared_paged", "concurrent"):  # statements prepared while it was on too
        after = fetch(target, method)
        assert type(after.rows[0]).__name__ == "OrderedDict"
        assert_same_fetch(after, fetch(ordered, method))
    decoding.disable(session)  # a no-op
    assert not decoding.is_enabled(session)
    session.shutdown()


class Bomb:
    """Registered for the UDT ``bomb``: refuses x == 2, so the second row of ``bombs`` fails to decode."""

    def __init__(self, x):
        if x == 2:
            raise ValueError("x=2 refused by Bomb")
        self.x = x


BOMBS = f"SELECT k, ck, i, b FROM {KS}.bombs WHERE k = 1"
BOMB_MESSAGE = 'Failed decoding result column "b" of type frozen<bomb>: x=2 refused by Bomb'


def decode_error(clusters, protocol_version, rows, prepared):
    """The error of reading ``bombs`` on a cluster of its own (a decode failure makes the driver close
    that connection and mark the host down, which must not disturb the other tests)."""
    cluster = clusters.cluster(protocol_version)
    cluster.register_user_type(KS, "bomb", Bomb)
    try:
        session = cluster.connect()
        if rows:
            assert decoding.enable(session, rows=rows)
        statement = session.prepare(BOMBS) if prepared else SimpleStatement(BOMBS)
        with pytest.raises(DriverException) as info:
            session.execute(statement)
        return info.value
    finally:
        clusters.shutdown(cluster)


@pytest.mark.parametrize("protocol_version", PROTOCOLS, ids=lambda p: f"v{p}")
@pytest.mark.parametrize("prepared", [False, True], ids=["simple", "prepared"])
@pytest.mark.parametrize("rows", ROWS)
def test_decode_failure_names_the_column_like_the_driver(clusters, schema, rows, prepared, protocol_version):
    theirs = decode_error(clusters, protocol_version, None, prepared)
    assert str(theirs) == BOMB_MESSAGE  # the driver's own message, checked first
    ours = decode_error(clusters, protocol_version, rows, prepared)
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)


@pytest.mark.parametrize("protocol_version", PROTOCOLS, ids=lambda p: f"v{p}")
def test_schema_changes_between_queries(clusters, schema, protocol_version):
    """ALTER TABLE ADD/DROP, ALTER TYPE ADD and DROP+CREATE under cached plans and prepared statements."""
    name = f"alt_{schema.key()}"
    table, udt = f"{KS}.{name}", f"{KS}.{name}_t"
    source = Source(name, "k", (1, 2))
    ddl = clusters.driver(protocol_version, "tuple").session
    fast = {rows: clusters.fast_target(protocol_version, "default", rows) for rows in ROWS}
    driver = {rows: clusters.driver(protocol_version, rows) for rows in ROWS}

    def compare(columns):
        for rows in ROWS:
            for method in ("simple", "prepared", "simple_paged", "prepared_paged"):
                ours = fetch(fast[rows], method, source)
                assert_same_fetch(ours, fetch(driver[rows], method, source))
                assert ours.column_names == columns
        return fetch(fast["named"], "prepared", source).rows

    ddl.execute(f"CREATE TYPE {udt} (x int)")
    try:
        ddl.execute(f"CREATE TABLE {table} (k int PRIMARY KEY, a int, u frozen<{name}_t>)")
        ddl.execute(f"INSERT INTO {table} (k, a, u) VALUES (1, 10, {{x: 1}})")
        ddl.execute(f"INSERT INTO {table} (k, a) VALUES (2, 20)")
        compare(["k", "a", "u"])

        ddl.execute(f"ALTER TABLE {table} ADD b text")
        ddl.execute(f"UPDATE {table} SET b = 'bee' WHERE k = 2")
        got = compare(["k", "a", "b", "u"])
        assert [r.b for r in got] == [None, "bee"] or [r.b for r in got] == ["bee", None]

        ddl.execute(f"ALTER TYPE {udt} ADD y text")
        ddl.execute(f"UPDATE {table} SET u = {{x: 2, y: 'why'}} WHERE k = 2")
        got = {r.k: r for r in compare(["k", "a", "b", "u"])}
        assert got[2].u._fields == ("x", "y") and got[2].u.y == "why"

        ddl.execute(f"ALTER TABLE {table} DROP a")
        compare(["k", "b", "u"])

        ddl.execute(f"DROP TABLE {table}")
        ddl.execute(f"CREATE TABLE {table} (k int PRIMARY KEY, a text, b int)")  # same names, other types
        ddl.execute(f"INSERT INTO {table} (k, a, b) VALUES (1, 'one', 1)")
        got = compare(["k", "a", "b"])
        assert [tuple(r) for r in got] == [(1, "one", 1)]
    finally:
        ddl.execute(f"DROP TABLE IF EXISTS {table}")
        ddl.execute(f"DROP TYPE IF EXISTS {udt}")


@pytest.mark.parametrize("rows", ROWS)
def test_cache_info_counts_hits(clusters, schema, rows):
    fast = clusters.fast_target(5, "default", rows)
    for method in ("simple", "prepared"):
        fetch(fast, method)  # builds (or finds) the plans
    hits, misses = decoding.cache_info()[rows]
    for _ in range(3):
        for method in ("simple", "prepared"):
            fetch(fast, method)
    assert decoding.cache_info()[rows] == (hits + 6, misses)


class NoColumns(ColumnEncryptionPolicy):
    """A column encryption policy that encrypts nothing: its presence alone must keep the fast path off."""

    def contains_column(self, coldesc):
        return False


def test_column_encryption_policy_keeps_the_drivers_path(clusters, schema):
    cluster = clusters.cluster(5, row_factory=dict_factory, column_encryption_policy=NoColumns())
    try:
        if _driver.distribution() == "scylla-driver":  # it has no column encryption yet, and says so
            with pytest.raises(Exception, match="column_encryption_policy is temporary disabled"):
                cluster.connect()
            return
        session = cluster.connect()
        with pytest.warns(RuntimeWarning, match="column encryption policy"):
            assert decoding.enable(session, rows="named") is False
        assert not decoding.is_enabled(session)
        got = fetch(Target(session), "prepared")
        assert_row_kind(got.rows, "dict")
        assert_same_fetch(got, fetch(clusters.driver(5, "dict"), "prepared"))
    finally:
        clusters.shutdown(cluster)


class RegT:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return type(other) is RegT and (self.a, self.b) == (other.a, other.b)

    def __repr__(self):
        return f"RegT({self.a!r}, {self.b!r})"


@pytest.mark.parametrize("rows", ROWS)
def test_registering_a_udt_class_reaches_cached_plans(clusters, schema, rows):
    """``register_user_type`` after the fast path cached a plan for the type: later results use the class."""
    cluster = clusters.cluster(5, row_factory=named_tuple_factory if rows == "named" else dict_factory)
    try:
        fast, plain = cluster.connect(), cluster.connect()
        assert decoding.enable(fast, rows=rows)
        query = f"SELECT * FROM {KS}.regs WHERE k = 1"
        fast_ps, plain_ps = fast.prepare(query), plain.prepare(query)

        def both(statement_fast, statement_plain):
            ours, theirs = list(fast.execute(statement_fast)), list(plain.execute(statement_plain))
            assert_same_rows(ours, theirs)
            return ours[0]

        before = both(query, query)
        assert type(before[1] if rows == "named" else before["r"]).__name__ == "reg_t"
        cluster.register_user_type(KS, "reg_t", RegT)
        after = both(query, query)
        assert (after[1] if rows == "named" else after["r"]) == RegT(1, "one")
        both(fast_ps, plain_ps)  # prepared before the registration: whatever the driver gives
        assert (both(fast.prepare(query), plain.prepare(query))[1 if rows == "named" else "r"]) == RegT(1, "one")
    finally:
        clusters.shutdown(cluster)


class XcT:
    def __init__(self, a, b):
        self.a, self.b = a, b


def test_registered_udt_class_survives_another_cluster(clusters, schema):
    mapped = clusters.cluster(5)
    mapped.register_user_type(KS, "xc_t", XcT)
    other = clusters.cluster(5)  # no registration for xc_t
    try:
        fast, plain, elsewhere = mapped.connect(), mapped.connect(), other.connect()
        assert decoding.enable(fast, rows="named")
        query = f"SELECT * FROM {KS}.xc WHERE k = 1"
        assert type(fast.execute(query).one().r) is XcT
        assert type(elsewhere.execute(query).one().r).__name__ == "xc_t"  # the other cluster's own view
        assert type(plain.execute(query).one().r) is XcT  # the driver's path on the mapped cluster
        assert type(elsewhere.execute(query).one().r).__name__ == "xc_t"
        assert type(fast.execute(query).one().r) is XcT  # fails: xc_t namedtuple
    finally:
        clusters.shutdown(mapped)
        clusters.shutdown(other)


@pytest.mark.parametrize("rows", ROWS)
def test_query_trace_through_the_fastpath(clusters, schema, rows):
    """The driver reads a trace with its own query (named_tuple_factory, the driver's handler): it still works."""
    fast = clusters.fast_target(5, "default", rows).session
    rs = fast.execute(SimpleStatement(ALL_TYPES.simple()), trace=True)
    assert_row_kind(list(rs.current_rows), rows)
    trace = rs.get_query_trace(max_wait_sec=10)
    assert trace.request_type and trace.duration is not None and trace.events


@pytest.mark.parametrize("rows", ROWS)
def test_results_without_rows_through_the_fastpath(clusters, schema, rows):
    """Void, set-keyspace and schema results, empty pages and aggregates (with a server warning) on a fast session."""
    fast = clusters.fast_target(5, "default", rows)
    driver = clusters.driver(5, rows)
    session = fast.session
    name = f"nr_{schema.key()}"
    assert session.execute(f"CREATE TABLE {KS}.{name} (k int PRIMARY KEY, v int)").current_rows == []
    try:
        assert session.execute(f"INSERT INTO {KS}.{name} (k, v) VALUES (1, 1)").current_rows == []
        for query in (
            f"SELECT * FROM {KS}.{name} WHERE k = 99",  # no rows
            f"SELECT count(*), max(v) FROM {KS}.{name}",  # an aggregate without partition key: a server warning
            f"SELECT * FROM {KS}.all_types WHERE pk = 99",
        ):
            ours, theirs = fast.execute(query), driver.execute(query)
            assert_same_rows(list(ours), list(theirs))
            assert ours.column_names == theirs.column_names
        ours = fast.execute(f"SELECT count(*) FROM {KS}.{name}")
        assert ours.response_future.warnings  # the frame carried a warning before the rows
        assert_row_kind(ours.current_rows, rows)
        session.execute(f"USE {KS}")
        assert session.keyspace == KS
        assert_row_kind(list(session.execute(f"SELECT * FROM {name}")), rows)
    finally:
        session.execute(f"DROP TABLE {KS}.{name}")


@pytest.mark.parametrize("protocol_version", PROTOCOLS, ids=lambda p: f"v{p}")
@pytest.mark.parametrize("rows", ROWS)
def test_large_values_spanning_segments(clusters, schema, rows, protocol_version):
    """Results of about 600 KB (several v5 segments, one large v4 frame), rows larger than a page's bytes."""
    source = Source("big", "k", (1, 2))
    fast = clusters.fast_target(protocol_version, "default", rows)
    driver = clusters.driver(protocol_version, rows)
    for method in ("simple", "prepared", "prepared_paged", "concurrent"):
        ours = fetch(fast, method, source)
        assert_same_fetch(ours, fetch(driver, method, source))
    got = fetch(fast, "prepared", source)
    by_k = {row["k"]: row for row in (dict(zip(got.column_names, values_of(r))) for r in got.rows)}
    assert [tuple(by_k[k][c] for c in ("k", "b", "t", "l")) for k in (1, 2)] == BIG_ROWS
