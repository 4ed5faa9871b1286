"""Our factories against the driver's, through real SELECTs of every CQL type.

For each of our factories (both implementations) and every way of reading rows (simple and prepared
statements, paging, execute_async, execute_concurrent_with_args) and of configuring the factory
(the cluster's default ExecutionProfile, a named ExecutionProfile, legacy ``session.row_factory``),
the rows equal those of the driver's factory read the same way: ``==``, row type and field names,
every value with the same types, dict keys in the same order; and they are all the table's rows.
"""

import pytest

import pyfactories
from cassandra import query

from .support import (
    ALL_TYPES,
    ALL_TYPES_ROWS,
    DRIVER,
    METHODS,
    assert_same_fetch,
    fetch,
    impl_id,
    values_of,
)

pytestmark = pytest.mark.integration

KINDS = ["named", "dict", "ordered"]
CONFIGS = [(5, "default"), (5, "profile"), (5, "legacy"), (4, "profile")]
# Pages of ALL_TYPES per method: 8 rows by 3; concurrent reads partitions of 4, 1 and 3 rows by 2.
MIN_PAGES = {"simple": 1, "prepared": 1, "simple_paged": 3, "prepared_paged": 3, "execute_async": 3, "concurrent": 5}


def by_key(rows):
    return sorted((values_of(r) for r in rows), key=lambda v: v[:2])


@pytest.fixture(scope="module")
def truth(clusters, schema):
    """Plain tuples of every source, per protocol: what all methods must read, in some order."""
    return {
        (protocol, source.table): by_key(fetch(clusters.driver(protocol, "tuple"), "simple", source).rows)
        for protocol in (4, 5)
        for source in (ALL_TYPES, schema.counters)
    }


@pytest.mark.parametrize("protocol, mode", CONFIGS, ids=[f"v{p}-{m}" for p, m in CONFIGS])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", KINDS)
def test_rows_equal_driver_rows(clusters, schema, truth, impl, kind, method, protocol, mode):
    ours_target = clusters.target(protocol, mode, f"{impl_id(impl)}.{kind}")
    driver_target = clusters.target(protocol, mode, f"driver.{kind}")
    for source in (ALL_TYPES, schema.counters):
        ours = fetch(ours_target, method, source)
        theirs = fetch(driver_target, method, source)
        assert_same_fetch(ours, theirs)
        assert by_key(ours.rows) == truth[protocol, source.table]
    assert len(truth[protocol, "all_types"]) == ALL_TYPES_ROWS
    assert fetch(ours_target, method).pages >= MIN_PAGES[method]


@pytest.mark.parametrize("mode", ["profile", "legacy"])
@pytest.mark.parametrize("method", METHODS)
def test_tuple_factory_is_the_drivers(clusters, truth, method, mode):
    assert pyfactories.tuple_factory is query.tuple_factory is DRIVER["tuple"]
    got = fetch(clusters.target(5, mode, "driver.tuple"), method)
    assert all(type(row) is tuple for row in got.rows)
    assert by_key(got.rows) == truth[5, "all_types"]


@pytest.mark.parametrize("kind", KINDS)
def test_cache_serves_repeated_queries(clusters, impl, kind):
    """The second read of the same columns reuses what the first built (the row class, the dict keys)
    and gives equal rows."""
    target = clusters.target(5, "profile", f"{impl_id(impl)}.{kind}")
    first = fetch(target, "prepared")
    hits = impl.cache_info().hits  # the row-class cache
    second = fetch(target, "prepared")
    assert_same_fetch(second, first)
    if kind == "named":
        assert impl.cache_info().hits > hits
        assert type(second.rows[0]) is type(first.rows[0])
    else:
        assert all(a is b for a, b in zip(second.rows[0], first.rows[0]))  # the same key objects
