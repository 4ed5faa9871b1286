"""The table really holds every CQL type, NULLs and empty values: pinned through the driver's own path,
so that the differential tests elsewhere compare rows that are worth comparing."""

import datetime
import uuid
from decimal import Decimal

import pytest
from cassandra import cqltypes
from cassandra.util import Date, Duration, Time

from .support import ALL_TYPES_ROWS, CQL_TYPES, KS, Address, fetch

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def rows(clusters):
    fetched = fetch(clusters.driver(5, "dict"), "simple")
    return {(r["pk"], r["ck"]): r for r in fetched.rows}


def test_table_has_every_cql_type(cluster, session):
    cluster.refresh_table_metadata(KS, "all_types")
    cluster.refresh_table_metadata(KS, "counters")
    meta = cluster.metadata.keyspaces[KS]
    types = " ".join(c.cql_type for t in ("all_types", "counters") for c in meta.tables[t].columns.values())
    words = set(types.replace("<", " ").replace(">", " ").replace(",", " ").split())
    assert CQL_TYPES <= words, CQL_TYPES - words
    # a user-defined type, frozen and not, a static column and awkward names are there too
    columns = meta.tables["all_types"].columns
    assert {"address", "address_cls"} <= words
    assert columns["c_udt_nf"].cql_type == "address"
    assert columns["c_static"].is_static
    assert {"Weird Name", "select", "1st", "_x"} <= set(columns)


def test_rows_cover_values_nulls_and_empties(rows):
    assert len(rows) == ALL_TYPES_ROWS
    full = rows[1, 1]
    assert full["c_udt_cls"] == Address("Class St", 99)  # registered class
    assert full["c_list_udt_cls"] == [Address("a", 1), Address("b", None)]
    assert type(full["c_udt"]).__name__ == "address" and full["c_udt"].tags == {"home", "work"}
    assert full["c_udt_nf"].tags is None
    assert full["c_nested_tuple"][2].street == "in tuple"
    assert full["c_duration"] == Duration(14, 25, 18367008009010)
    assert full["c_decimal"] == Decimal("12345.6789")
    assert full["c_time"] == Time("13:14:15.123456789")
    assert full["c_timestamp"] == datetime.datetime(2024, 1, 2, 3, 4, 5, 678000)
    assert full["c_vector"] == [1.0, -2.5, 3.25] and full["c_vector_text"] == ["α", "β"]
    assert full["c_list"] == [3, 1, 2, 1]
    assert dict(full["c_nested_map"]) == {(1, "a"): [1, 2], (2, "b"): []}
    assert full["Weird Name"] == 1 and full["select"] == 2 and full["1st"] == 3 and full["_x"] == 4

    extremes = rows[1, 2]
    assert extremes["c_bigint"] == -(2**63) and extremes["c_double"] == float("-inf")
    assert extremes["c_date"] == Date(-(2**31))  # outside datetime.date: kept as days
    assert extremes["c_uuid"] == uuid.UUID(int=0)
    assert str(extremes["c_tuple"][2]) == "-0.0"

    # the static column is shared by the rows of a partition; NULL elsewhere
    assert {k: r["c_static"] for k, r in rows.items() if k[0] == 1} == {(1, c): "static of partition 1" for c in range(1, 5)}
    assert rows[3, 1]["c_static"] is None

    nulls = rows[1, 3]
    assert all(v is None for k, v in nulls.items() if k not in ("pk", "ck", "c_static"))

    empty = rows[1, 4]
    assert empty["c_text"] == "" and empty["c_ascii"] == "" and empty["c_blob"] == b""
    # An empty (zero-length, not NULL) int: the driver reads it as None, not cassandra.cqltypes.EMPTY.
    for name in ("c_int", "c_bigint", "c_boolean", "c_decimal", "c_double", "c_float", "c_inet",
                 "c_timestamp", "c_timeuuid", "c_uuid", "c_varint"):
        assert empty[name] is None, name
        assert empty[name] is not cqltypes.EMPTY
    assert empty["c_frozen_list"] == [] and not empty["c_frozen_set"] and not empty["c_frozen_map"]
    assert empty["c_nested_list"] == [{}]
    assert empty["c_tuple"] == (None, None, None)
    assert empty["c_vector_text"] == ["", ""]
    assert empty["c_udt"].street == "" and empty["c_udt"].zip is None


def test_counters(clusters, schema):
    got = fetch(clusters.driver(5, "named"), "simple", schema.counters).rows
    plus, minus = schema.counters.keys
    assert {r.k: r.c for r in got} == {plus: 5, minus: -3}
