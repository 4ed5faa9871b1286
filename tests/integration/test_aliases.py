"""Column names as the server sends them (aliases, functions, aggregates, duplicates, ``[json]``,
``[applied]``): our factories and the fast path give the driver's field names and keys."""

import pytest
from cassandra.query import SimpleStatement

from .support import KS, assert_same_rows

pytestmark = pytest.mark.integration

T = f"{KS}.all_types"
# id: (query, the field names of the driver's named_tuple_factory)
QUERIES = {
    "weird_and_count": (f'SELECT pk AS "Weird Name", count(*) FROM {T} WHERE pk = 1', ("Weird_Name", "count")),
    "awkward_columns": (
        f'SELECT pk, "Weird Name", "select", "1st", "_x" FROM {T} WHERE pk = 1',
        ("pk", "Weird_Name", "select", "field_3_", "x"),  # "select" is no Python keyword
    ),
    "aliases": (
        f'SELECT pk AS "select", ck AS "1st", c_int AS "_x", c_text AS "[applied]", c_udt.street, '
        f'c_int AS "$$", c_int AS "Ünïcode", c_int AS "a-b c", c_int AS "from" FROM {T} WHERE pk = 1',
        ("select", "field_1_", "x", "applied", "c_udt_street", "field_5_", "n_code", "a_b_c", "field_8_"),
    ),
    "duplicates": (f'SELECT pk, pk, ck AS pk, c_int AS "PK" FROM {T} WHERE pk = 1', ("pk", "pk_", "pk__", "PK")),
    "json": (f'SELECT JSON pk, c_text, "Weird Name" FROM {T} WHERE pk = 1', ("json",)),
    "functions": (
        f"SELECT CAST(pk AS text), blobAsText(c_blob), toJson(c_set), writetime(c_text), ttl(c_text), token(pk) "
        f"FROM {T} WHERE pk = 2",
        ("cast_pk_as_text", "system_blobastext_c_blob", "system_tojson_c_set", "writetime_c_text", "ttl_c_text",
         "system_token_pk"),
    ),
    "aggregates": (  # no partition key: the server also sends a warning
        f'SELECT max(c_int), min(pk), sum(c_int), avg(c_double), count(c_text), count(*) AS "system.count(*)" FROM {T}',
        ("system_max_c_int", "system_min_pk", "system_sum_c_int", "system_avg_c_double", "system_count_c_text",
         "system_count"),
    ),
}

CONFIGS = [f"{impl}.{kind}" for impl in ("c", "py") for kind in ("named", "dict", "ordered")] + ["fast.named", "fast.dict"]


@pytest.mark.parametrize("protocol_version", [5, 4], ids=lambda p: f"v{p}")
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("name", QUERIES)
def test_field_names_are_the_drivers(clusters, name, config, protocol_version):
    cql, fields = QUERIES[name]
    owner, kind = config.split(".")
    if owner == "fast":
        ours = clusters.fast_target(protocol_version, "profile", kind)
    else:
        ours = clusters.target(protocol_version, "profile", config)
    driver = clusters.driver(protocol_version, kind)
    named = clusters.driver(protocol_version, "named")
    for statement in (SimpleStatement(cql), ours.prepare(cql)):
        mine = list(ours.execute(statement))
        theirs = list(driver.execute(statement if statement.__class__ is SimpleStatement else driver.prepare(cql)))
        assert mine
        assert_same_rows(mine, theirs)
        # pin the driver's names: our rows have them too
        assert type(list(named.execute(SimpleStatement(cql)))[0])._fields == fields
        if kind == "named":
            assert type(mine[0])._fields == fields
