"""Per-request row factories on one fast-path session, through a real server: each request gets the
rows of the factory its execution profile names, equal to that factory's rows on the driver's path,
through simple and prepared statements, paging, execute_async and execute_concurrent, on protocols
v4 and v5; a factory the fast path does not know keeps the driver's path, and a factory's error is
its request's error only.
"""

import pytest
from cassandra.cluster import EXEC_PROFILE_DEFAULT
from cassandra.protocol import ProtocolHandler
from cassandra.query import SimpleStatement, dict_factory, named_tuple_factory, tuple_factory

from pyfactories.rows import _rows_py
from pyfactories.rows import _rows
from pyfactories import decoding

from .support import ALL_TYPES, ALL_TYPES_ROWS, METHODS, PAGE, Target, assert_same_fetch, assert_same_rows, fetch

pytestmark = pytest.mark.integration

PROTOCOLS = [5, 4]
CONFIGS = ["default", "profile"]  # of FAST_CONFIGS: those whose requests may name a profile


class Typed:
    """Stands for pyfactories' typed-row factories: marked, so it gets the tuples the fast path decoded."""

    __pyfactories_factory__ = True

    def __init__(self):
        self.calls = []

    def __call__(self, colnames, rows):
        self.calls.append((list(colnames), list(rows)))
        return [("typed", *row) for row in rows]


class Refusing:
    __pyfactories_factory__ = True

    def __call__(self, colnames, rows):
        raise ValueError(f"refused {len(rows)} rows")


def users_factory(colnames, rows):
    """An application's own factory: the fast path does not know it."""
    return [{"columns": len(colnames), "values": list(row)} for row in rows]


def with_profile(fast, factory):
    # a clone of the session's default profile (an unregistered profile's load balancing policy knows no hosts)
    profile = fast.session.execution_profile_clone_update(EXEC_PROFILE_DEFAULT, row_factory=factory)
    return Target(fast.session, {"execution_profile": profile})


# route id: (the factory a request's profile names, the driver's reference factory kind, the handler's kind)
BUILT = {
    "tuple": (tuple_factory, "tuple", "tuple"),
    "dict": (dict_factory, "dict", "dict"),
    "pf_dict": (_rows.dict_factory, "dict", "dict"),
    "cached_named": (_rows.cached_named_tuple_factory, "named", "named"),
    "py_cached_named": (_rows_py.cached_named_tuple_factory, "named", "named"),
    "pf_ordered": (_rows.ordered_dict_factory, "ordered", "tuple"),
}


@pytest.mark.parametrize("protocol_version", PROTOCOLS, ids=lambda p: f"v{p}")
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("route", BUILT)
def test_each_request_gets_its_own_factorys_rows(clusters, schema, route, config, protocol_version):
    factory, reference, handler = BUILT[route]
    fast = clusters.fast_target(protocol_version, config, "dict" if reference == "named" else "named")
    target = with_profile(fast, factory)
    driver = clusters.driver(protocol_version, reference)
    for method in METHODS:
        assert_same_fetch(fetch(target, method), fetch(driver, method))
    rs = target.execute(SimpleStatement(ALL_TYPES.simple(), fetch_size=PAGE))
    assert rs.response_future._protocol_handler is decoding.handler(handler)
    assert rs.response_future.row_factory is (factory if handler == "tuple" and factory is not tuple_factory
                                              else tuple_factory)
    rs.fetch_next_page()  # a later page: the same route
    assert rs.response_future._protocol_handler is decoding.handler(handler)
    if reference == "tuple":
        assert all(type(row) is tuple for row in rs.current_rows)


@pytest.mark.parametrize("protocol_version", PROTOCOLS, ids=lambda p: f"v{p}")
def test_the_session_default_and_other_profiles_do_not_mix(clusters, schema, protocol_version):
    """Requests of several profiles in flight together on one session each get their own rows."""
    fast = clusters.fast_target(protocol_version, "default", "dict")
    targets = {kind: with_profile(fast, factory) for kind, factory in
               (("tuple", tuple_factory), ("named", _rows.cached_named_tuple_factory))}
    targets["dict"] = fast  # the session's default: the driver's named_tuple_factory, enabled with rows="dict"
    statement = SimpleStatement(ALL_TYPES.simple(), fetch_size=PAGE)
    futures = {kind: t.session.execute_async(statement, **t.kwargs) for kind, t in targets.items() for _ in range(3)}
    for kind, future in futures.items():
        assert_same_rows(list(future.result()), list(clusters.driver(protocol_version, kind).execute(statement)))


@pytest.mark.parametrize("protocol_version", PROTOCOLS, ids=lambda p: f"v{p}")
@pytest.mark.parametrize("method", METHODS)
def test_a_marked_factory_gets_the_drivers_tuples(clusters, schema, method, protocol_version):
    typed = Typed()
    fast = clusters.fast_target(protocol_version, "default", "named")
    got = fetch(with_profile(fast, typed), method)
    theirs = fetch(clusters.driver(protocol_version, "tuple"), method)
    assert len(typed.calls) == theirs.pages  # once per page
    assert all(names == theirs.column_names for names, _ in typed.calls)
    given = [row for _, rows in typed.calls for row in rows]
    if method == "concurrent":  # pages of the partitions arrive in any order
        given, expected = sorted(given, key=repr), sorted(theirs.rows, key=repr)
    else:
        expected = theirs.rows
    assert_same_rows(given, expected)
    assert got.rows == [("typed", *row) for row in theirs.rows]


@pytest.mark.parametrize("protocol_version", PROTOCOLS, ids=lambda p: f"v{p}")
@pytest.mark.parametrize("prepared", [False, True], ids=["simple", "prepared"])
def test_a_raising_factory_fails_only_its_request(clusters, schema, prepared, protocol_version):
    fast = clusters.fast_target(protocol_version, "default", "named")
    refusing = with_profile(fast, Refusing())
    statement = fast.prepare(ALL_TYPES.prepared_in()) if prepared else SimpleStatement(ALL_TYPES.simple())
    parameters = [list(ALL_TYPES.keys)] if prepared else None
    in_flight = fast.session.execute_async(statement, parameters)
    for _ in range(3):
        with pytest.raises(ValueError, match=f"refused {ALL_TYPES_ROWS} rows"):
            refusing.execute(statement, parameters)
    driver = clusters.driver(protocol_version, "named")
    assert_same_rows(list(in_flight.result()), list(driver.execute(SimpleStatement(ALL_TYPES.simple()))))
    for method in ("simple", "prepared_paged", "concurrent"):  # the session, and its connections, still serve
        assert_same_fetch(fetch(fast, method), fetch(driver, method))


@pytest.mark.parametrize("protocol_version", PROTOCOLS, ids=lambda p: f"v{p}")
def test_an_unknown_factory_keeps_the_drivers_path(clusters, schema, protocol_version):
    fast = clusters.fast_target(protocol_version, "profile", "named")
    target = with_profile(fast, users_factory)
    tuples = clusters.driver(protocol_version, "tuple")
    for method in METHODS:
        ours, theirs = fetch(target, method), fetch(tuples, method)
        assert (ours.column_names, ours.column_types, ours.pages) == (theirs.column_names, theirs.column_types,
                                                                      theirs.pages)
        assert ours.rows == users_factory(theirs.column_names, theirs.rows)
    rs = target.execute(SimpleStatement(ALL_TYPES.simple(), fetch_size=PAGE))
    assert rs.response_future._protocol_handler is ProtocolHandler
    assert rs.response_future.row_factory is users_factory


@pytest.mark.parametrize("rows", ["named", "dict"])
def test_the_drivers_default_factory_gets_the_rows_enable_names(clusters, schema, rows):
    fast = clusters.fast_target(5, "profile", rows)  # its own default profile names our factory
    for method in ("simple", "prepared_paged", "concurrent"):
        assert_same_fetch(fetch(with_profile(fast, named_tuple_factory), method),
                          fetch(clusters.driver(5, rows), method))
