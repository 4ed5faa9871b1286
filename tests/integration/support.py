"""What the integration tests share: the schema and its rows, the factories under test, how rows are
fetched (simple, prepared, paged, async, concurrent) and how two row lists are compared.

Importable on its own (no pytest fixtures here), so the process-pool workers can use it too.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable

from cassandra import DriverException, query
from cassandra.cluster import Session
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.query import SimpleStatement

import pyfactories
from profiling import factories as registry
from pyfactories.rows import _rows_py
from pyfactories.rows import _rows

KS = "pyfactories_it"

# ---------------------------------------------------------------------------------------------
# Schema and data
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Address:
    """The Python class registered (``cluster.register_user_type``) for the UDT ``address_cls``.

    A module-level dataclass: it compares by value and pickles, so rows holding it cross processes.
    """

    street: str | None
    zip: int | None


# Every CQL type the suite covers, as the server spells it in ``system_schema.columns``.
CQL_TYPES = {
    "ascii", "bigint", "blob", "boolean", "counter", "date", "decimal", "double", "duration", "float",
    "inet", "int", "smallint", "text", "time", "timestamp", "timeuuid", "tinyint", "uuid", "varint",
    "list", "set", "map", "frozen", "tuple", "vector",
}  # fmt: skip

SCHEMA = [
    "CREATE TYPE IF NOT EXISTS {ks}.address (street text, zip int, tags frozen<set<text>>)",
    "CREATE TYPE IF NOT EXISTS {ks}.address_cls (street text, zip int)",
    # Only for the decode-failure tests: its registered class raises (see test_fastpath).
    "CREATE TYPE IF NOT EXISTS {ks}.bomb (x int)",
    # Only for the UDT registration tests (each owns its type, so no registration leaks elsewhere).
    "CREATE TYPE IF NOT EXISTS {ks}.reg_t (a int, b text)",
    "CREATE TYPE IF NOT EXISTS {ks}.xc_t (a int, b text)",
    """CREATE TABLE IF NOT EXISTS {ks}.all_types (
        pk int, ck int,
        c_ascii ascii, c_bigint bigint, c_blob blob, c_boolean boolean, c_date date, c_decimal decimal,
        c_double double, c_duration duration, c_float float, c_inet inet, c_int int, c_smallint smallint,
        c_text text, c_time time, c_timestamp timestamp, c_timeuuid timeuuid, c_tinyint tinyint,
        c_uuid uuid, c_varint varint,
        c_list list<int>, c_set set<text>, c_map map<text, int>,
        c_frozen_list frozen<list<text>>, c_frozen_set frozen<set<int>>, c_frozen_map frozen<map<int, text>>,
        c_nested_list list<frozen<map<text, frozen<set<int>>>>>,
        c_nested_map map<frozen<tuple<int, text>>, frozen<list<int>>>,
        c_tuple tuple<int, text, double>,
        c_nested_tuple tuple<int, frozen<list<text>>, frozen<address>>,
        c_udt frozen<address>,
        c_udt_nf address,
        c_udt_cls frozen<address_cls>,
        c_list_udt_cls list<frozen<address_cls>>,
        c_vector vector<float, 3>,
        c_vector_text vector<text, 2>,
        c_static text static,
        "Weird Name" int, "select" int, "1st" int, "_x" int,
        PRIMARY KEY (pk, ck)
    ) WITH CLUSTERING ORDER BY (ck ASC)""",
    "CREATE TABLE IF NOT EXISTS {ks}.counters (k bigint PRIMARY KEY, c counter)",
    "CREATE TABLE IF NOT EXISTS {ks}.lwt (k text PRIMARY KEY, v int, note text)",
    "CREATE TABLE IF NOT EXISTS {ks}.bombs (k int, ck int, b frozen<bomb>, i int, PRIMARY KEY (k, ck))",
    "CREATE TABLE IF NOT EXISTS {ks}.regs (k int PRIMARY KEY, r frozen<reg_t>)",
    "CREATE TABLE IF NOT EXISTS {ks}.xc (k int PRIMARY KEY, r frozen<xc_t>)",
    # Values larger than a protocol v5 segment (128 KiB): a result spans several segments.
    "CREATE TABLE IF NOT EXISTS {ks}.big (k int PRIMARY KEY, b blob, t text, l list<int>)",
]

_ALL = "INSERT INTO {ks}.all_types "
DATA = [
    # (1, 1): a value in every column
    _ALL + """(pk, ck, c_ascii, c_bigint, c_blob, c_boolean, c_date, c_decimal, c_double, c_duration, c_float,
        c_inet, c_int, c_smallint, c_text, c_time, c_timestamp, c_timeuuid, c_tinyint, c_uuid, c_varint,
        c_list, c_set, c_map, c_frozen_list, c_frozen_set, c_frozen_map, c_nested_list, c_nested_map,
        c_tuple, c_nested_tuple, c_udt, c_udt_nf, c_udt_cls, c_list_udt_cls, c_vector, c_vector_text,
        c_static, "Weird Name", "select", "1st", "_x")
    VALUES (1, 1, 'ascii text', 1234567890123, 0xdeadbeef, true, '2024-02-29', 12345.6789,
        3.141592653589793, 1y2mo3w4d5h6m7s8ms9us10ns, 1.5, '192.168.1.10', 42, 12345, 'text ünïcødé ✓ 🐍',
        '13:14:15.123456789', '2024-01-02T03:04:05.678Z', 50554d6e-29bb-11e5-b345-feff819cdc9f, 7,
        123e4567-e89b-12d3-a456-426614174000, 123456789012345678901234567890,
        [3, 1, 2, 1], {'b', 'a'}, {'one': 1, 'two': 2}, ['x', 'y'], {3, 1}, {2: 'b', 1: 'a'},
        [{'k': {1, 2}}, {'j': {}}], {(1, 'a'): [1, 2], (2, 'b'): []},
        (1, 'two', 3.0), (1, ['a'], {street: 'in tuple', zip: 1, tags: {'t'}}),
        {street: 'Main St', zip: 12345, tags: {'home', 'work'}}, {street: 'Side St', zip: 1},
        {street: 'Class St', zip: 99}, [{street: 'a', zip: 1}, {street: 'b', zip: null}],
        [1.0, -2.5, 3.25], ['α', 'β'],
        'static of partition 1', 1, 2, 3, 4)""",
    # (1, 2): extremes
    _ALL + """(pk, ck, c_ascii, c_bigint, c_blob, c_boolean, c_date, c_decimal, c_double, c_duration, c_float,
        c_inet, c_int, c_smallint, c_text, c_time, c_timestamp, c_timeuuid, c_tinyint, c_uuid, c_varint,
        c_list, c_tuple, c_vector)
    VALUES (1, 2, '~!@#$%^&*()', -9223372036854775808, 0x00ff00, false, 0, -1.5E-30, -Infinity, -1mo2d,
        Infinity, '::1', 2147483647, -32768, 'x', '23:59:59.999999999', '1900-01-01 00:00:00+0000',
        00000000-0000-1000-8080-808080808080, -128, 00000000-0000-0000-0000-000000000000,
        -1267650600228229401496703205376, [-2147483648, 2147483647], (-1, '', -0.0),
        [-0.0, 3.4028235E38, -1.17549435E-38])""",
    # (1, 3): NULL in every column but the key
    _ALL + "(pk, ck) VALUES (1, 3)",
    # (1, 4): empty values; an empty int is written as blobAsInt(0x) (the driver reads such values as None)
    _ALL + """(pk, ck, c_ascii, c_blob, c_text, c_int, c_bigint, c_boolean, c_decimal, c_double, c_float,
        c_inet, c_timestamp, c_timeuuid, c_uuid, c_varint, c_frozen_list, c_frozen_set, c_frozen_map,
        c_nested_list, c_tuple, c_vector_text, c_udt)
    VALUES (1, 4, '', 0x, '', blobAsInt(0x), blobAsBigint(0x), blobAsBoolean(0x), blobAsDecimal(0x),
        blobAsDouble(0x), blobAsFloat(0x), blobAsInet(0x), blobAsTimestamp(0x), blobAsTimeuuid(0x),
        blobAsUuid(0x), blobAsVarint(0x), [], {}, {}, [{}], (null, null, null), ['', ''],
        {street: '', zip: null})""",
    # partition 2: another static value
    _ALL + """(pk, ck, c_text, c_int, c_map, c_udt_cls, c_static, "select") VALUES (2, 1, 'partition two', -1,
        {'': 0}, {street: null, zip: null}, 'static of partition 2', 5)""",
    # partition 3: a few sparse rows, no static value
    _ALL + "(pk, ck, c_int, c_list) VALUES (3, 1, 31, [1])",
    _ALL + "(pk, ck, c_text, c_set) VALUES (3, 2, 'three-two', {'z'})",
    _ALL + "(pk, ck, c_date, c_time, \"1st\") VALUES (3, 3, '-1000-01-01', '00:00:00', 33)",
    "INSERT INTO {ks}.bombs (k, ck, b, i) VALUES (1, 1, {x: 1}, 11)",
    "INSERT INTO {ks}.bombs (k, ck, b, i) VALUES (1, 2, {x: 2}, 12)",  # the registered class raises for x=2
    "INSERT INTO {ks}.bombs (k, ck, b, i) VALUES (1, 3, {x: 3}, 13)",
    "INSERT INTO {ks}.regs (k, r) VALUES (1, {a: 1, b: 'one'})",
    "INSERT INTO {ks}.xc (k, r) VALUES (1, {a: 1, b: 'one'})",
]

# Written with bound parameters (too long for CQL literals) by the schema fixture.
BIG_INSERT = "INSERT INTO {ks}.big (k, b, t, l) VALUES (%s, %s, %s, %s)"
BIG_ROWS = [
    (1, bytes(range(256)) * 1200, "ü" * 100_000, list(range(-10_000, 10_000))),
    (2, b"small", "small", [1]),
]

ALL_TYPES_KEYS = (1, 2, 3)
ALL_TYPES_ROWS = 8
PAGE = 3  # fetch_size of the paged methods: 8 rows -> 3 pages

SCHEMA_DIGEST = hashlib.sha256("\n".join(SCHEMA + DATA).encode()).hexdigest()[:16]


def statements(texts: list[str]) -> list[str]:
    return [t.replace("{ks}", KS) for t in texts]


# ---------------------------------------------------------------------------------------------
# Factories
# ---------------------------------------------------------------------------------------------

# By the rows they make ("tuple", "named", "dict", "ordered"), from the project's factory registry: the
# driver's factories and ours that take any column list (typed rows, which need a class of the columns,
# have tests of their own: test_class_rows*.py).
DRIVER = {f.rows: f.row_factory for f in registry.of_family("driver") if f.module == "cassandra.query"}
IMPLEMENTATIONS = {"c": _rows, "py": _rows_py}
OURS = {f.rows: f.attr for f in registry.of_family("pyfactories") if f.module == "pyfactories"}


# The fast path's test sessions (rows = named or dict), by the factory the session itself is configured
# with, each one the fast path routes to the handler that builds those rows while decoding:
#   default: a Cluster with the default profile (the driver's named_tuple_factory; enable's rows= decides)
#   profile: the default ExecutionProfile names our compiled cached_named_tuple_factory or dict_factory
#   legacy:  a Cluster without profiles and session.row_factory = our pure-Python twin of those
FAST_CONFIGS = ("default", "profile", "legacy")


def factories() -> dict[str, Callable]:
    """Every factory under test by id: ``driver.<kind>`` and ``<impl>.<kind>`` (impl ``c`` or ``py``)."""
    out = {f"driver.{kind}": f for kind, f in DRIVER.items()}
    for impl_id, module in IMPLEMENTATIONS.items():
        for kind, name in OURS.items():
            out[f"{impl_id}.{kind}"] = getattr(module, name)
    return out


def impl_id(module: Any) -> str:
    return {m.__name__: i for i, m in IMPLEMENTATIONS.items()}[module.__name__]


assert pyfactories.tuple_factory is query.tuple_factory

# ---------------------------------------------------------------------------------------------
# Fetching rows
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """A set of partitions of one table; every method reads all their rows."""

    table: str
    key: str
    keys: tuple

    def simple(self) -> str:
        return f"SELECT * FROM {KS}.{self.table} WHERE {self.key} IN ({', '.join(map(str, self.keys))})"

    def prepared_in(self) -> str:
        return f"SELECT * FROM {KS}.{self.table} WHERE {self.key} IN ?"

    def prepared_eq(self) -> str:
        return f"SELECT * FROM {KS}.{self.table} WHERE {self.key} = ?"


ALL_TYPES = Source("all_types", "pk", ALL_TYPES_KEYS)


@dataclass
class Target:
    """A session plus what every execute on it passes (an execution profile name, or nothing)."""

    session: Session
    kwargs: dict = field(default_factory=dict)
    _prepared: dict = field(default_factory=dict)

    def prepare(self, cql: str, fetch_size: int | None = None):
        key = (cql, fetch_size)
        if key not in self._prepared:
            ps = self.session.prepare(cql)
            if fetch_size is not None:
                ps.fetch_size = fetch_size
            self._prepared[key] = ps
        return self._prepared[key]

    def execute(self, statement, parameters=None, **kwargs):
        return self.session.execute(statement, parameters, **self.kwargs, **kwargs)


@dataclass
class Fetched:
    rows: list
    pages: int
    column_names: list
    column_types: list  # as CQL text


METHODS = ["simple", "prepared", "simple_paged", "prepared_paged", "execute_async", "concurrent"]


def collect(rs) -> tuple[list, int]:
    """All rows of a ResultSet, page by page."""
    rows, pages = list(rs.current_rows), 1
    while rs.has_more_pages:
        rs.fetch_next_page()
        rows.extend(rs.current_rows)
        pages += 1
    return rows, pages


def _fetched(rs, rows, pages) -> Fetched:
    return Fetched(rows, pages, list(rs.column_names), [t.cql_parameterized_type() for t in rs.column_types])


def fetch(target: Target, method: str, source: Source = ALL_TYPES) -> Fetched:
    """All rows of ``source`` through ``method`` (one of METHODS, or ``manual_paging``)."""
    keys = list(source.keys)
    if method == "simple":
        rs = target.execute(SimpleStatement(source.simple()))
    elif method == "prepared":
        rs = target.execute(target.prepare(source.prepared_in()), [keys])
    elif method == "simple_paged":
        rs = target.execute(SimpleStatement(source.simple(), fetch_size=PAGE))
    elif method == "prepared_paged":
        rs = target.execute(target.prepare(source.prepared_in(), fetch_size=PAGE), [keys])
    elif method == "execute_async":
        rs = target.session.execute_async(SimpleStatement(source.simple(), fetch_size=PAGE), **target.kwargs).result()
    elif method == "concurrent":
        # A paged prepared statement per partition, run concurrently; rows concatenated in argument order.
        ps = target.prepare(source.prepared_eq(), fetch_size=2)
        results = execute_concurrent_with_args(target.session, ps, [(k,) for k in keys], **target.kwargs)
        rows, pages = [], 0
        for ok, rs in results:
            assert ok, rs
            part, n = collect(rs)
            rows.extend(part)
            pages += n
        return _fetched(rs, rows, pages)
    elif method == "manual_paging":
        # The application keeps the paging state and passes it back (ResultSet.paging_state).
        statement = SimpleStatement(source.simple(), fetch_size=PAGE)
        rs = target.execute(statement)
        rows, pages = list(rs.current_rows), 1
        while rs.paging_state is not None:
            rs = target.execute(statement, paging_state=rs.paging_state)
            rows.extend(rs.current_rows)
            pages += 1
        return _fetched(rs, rows, pages)
    else:
        raise ValueError(method)
    rows, pages = collect(rs)
    return _fetched(rs, rows, pages)


# ---------------------------------------------------------------------------------------------
# Comparing rows
# ---------------------------------------------------------------------------------------------

_LEAVES = (str, bytes, bool, int, float, Decimal, type(None))


def type_key(t: type) -> Any:
    """A type, or for a namedtuple (UDT values) its name and fields: the driver builds a new
    namedtuple class for a UDT whenever it parses result metadata, so identity would be too strict."""
    fields = getattr(t, "_fields", None)
    return t if fields is None else (t.__qualname__, fields)


def shape(value: Any) -> Any:
    """The exact types of a value, recursively (containers, UDT classes), and reprs of number leaves."""
    t = type_key(type(value))
    if isinstance(value, (float, Decimal)):
        return t, repr(value)  # tells -0.0 from 0.0 and 1.10 from 1.1
    if isinstance(value, _LEAVES):
        return t
    if isinstance(value, Mapping) or hasattr(value, "items"):
        return t, tuple((shape(k), shape(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return t, tuple(shape(v) for v in value)
    if isinstance(value, (set, frozenset)) or type(value).__name__ == "SortedSet":
        return t, tuple(sorted((shape(v) for v in value), key=repr))
    if dataclasses.is_dataclass(value):
        return t, tuple(shape(v) for v in dataclasses.astuple(value))
    return t


def assert_same_value(mine: Any, theirs: Any, where: str) -> None:
    assert mine == theirs, where
    assert shape(mine) == shape(theirs), where


def assert_same_rows(ours: list, theirs: list) -> None:
    """``==`` row by row, the same row type and field names (or keys in the same order), every value the same."""
    assert isinstance(ours, list)
    assert len(ours) == len(theirs)
    for i, (mine, driver) in enumerate(zip(ours, theirs)):
        assert type(mine).__name__ == type(driver).__name__, f"row {i}"
        if isinstance(driver, dict):
            assert type(mine) is type(driver), f"row {i}"
            assert list(mine) == list(driver), f"row {i}: keys"
            for key in driver:
                assert_same_value(mine[key], driver[key], f"row {i}, key {key!r}")
        else:
            assert isinstance(mine, tuple), f"row {i}"
            fields = getattr(type(driver), "_fields", None)
            if fields is None:
                assert type(mine) is tuple, f"row {i}"
            else:
                assert type(mine)._fields == fields, f"row {i}: fields"
                for name in fields:
                    assert_same_value(getattr(mine, name), getattr(driver, name), f"row {i}, field {name!r}")
            for j, (a, b) in enumerate(zip(mine, driver)):
                assert_same_value(a, b, f"row {i}, item {j}")
        assert mine == driver, f"row {i}"
    assert ours == theirs


def assert_same_fetch(ours: Fetched, theirs: Fetched) -> None:
    assert ours.column_names == theirs.column_names
    assert ours.column_types == theirs.column_types
    assert ours.pages == theirs.pages
    assert_same_rows(ours.rows, theirs.rows)


def values_of(row: Any) -> tuple:
    """A row's values in column order, whatever its type."""
    return tuple(row.values()) if isinstance(row, Mapping) else tuple(row)


def pool_connections(session: Any) -> list:
    """The connections of ``session``'s pools: one per host (cassandra-driver's ``HostConnection``),
    one per shard that has one (scylla-driver's; a single one against Cassandra)."""
    conns = []
    for pool in session._pools.values():
        by_shard = getattr(pool, "_connections", None)
        conns += list(by_shard.values()) if by_shard is not None else [pool._connection]
    return conns


def refresh_schema(cluster, tries: int = 3) -> None:
    """``cluster.refresh_schema_metadata()``, made again (up to ``tries`` times, a second apart) when it
    was not refreshed: the control connection's queries time out after 2 s, which a node slowed by the
    machine's other work can miss."""
    for attempt in range(tries):
        try:
            cluster.refresh_schema_metadata()
            return
        except DriverException:
            if attempt == tries - 1:
                raise
            time.sleep(1.0)
