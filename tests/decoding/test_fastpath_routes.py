"""The fast path's routing, without a server: which handler and row factory a request gets for the
factory its profile names, and that the routed decode gives the rows that factory gives on the
driver's own path.
"""

import gc

import pytest
from cassandra import cqltypes, query
from cassandra.datastax.graph import graph_object_row_factory, graph_result_row_factory
from cassandra.protocol import ProtocolHandler
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyfactories.decoding import _routes
from pyfactories import decoding

from ..result_bodies import SAMPLES, rows_body
from .test_fastpath import assert_same, decode, result_sets


class Marked:
    """A typed-row factory as pyfactories marks them: it gets plain tuples and builds its own rows."""

    __pyfactories_factory__ = True

    def __init__(self):
        self.calls = []

    def __call__(self, colnames, rows):
        self.calls.append((list(colnames), list(rows)))
        return [("marked", *row) for row in rows]


class Unmarked(Marked):
    __pyfactories_factory__ = False


class Unreadable:
    """A callable whose attributes cannot be read: it takes the driver's path."""

    def __getattr__(self, name):
        raise RuntimeError(f"no {name} here")

    def __call__(self, colnames, rows):
        return rows


def users_factory(colnames, rows):
    return [dict(zip(colnames, row)) for row in rows]


DRIVER_PATH = [users_factory, query.ordered_dict_factory, graph_object_row_factory, graph_result_row_factory,
               lambda colnames, rows: rows, Unmarked(), Unreadable(), None]
DRIVER_PATH_IDS = ["users", "driver_ordered", "graph_object", "graph_result", "lambda", "unmarked", "unreadable",
                   "none"]


@pytest.mark.parametrize("rows", decoding.ROWS)
def test_the_drivers_default_gets_the_sessions_kind_of_rows(rows):
    assert decoding.route(query.named_tuple_factory, rows) == (decoding.handler(rows), query.tuple_factory)


@pytest.mark.parametrize("rows", decoding.ROWS)
def test_our_factories_and_the_drivers_dict_and_tuple_are_built_while_decoding(impl, rows):
    assert decoding.route(impl.cached_named_tuple_factory, rows) == (decoding.handler("named"), query.tuple_factory)
    for factory in (impl.dict_factory, query.dict_factory):
        assert decoding.route(factory, rows) == (decoding.handler("dict"), query.tuple_factory)
    assert decoding.route(query.tuple_factory, rows) == (decoding.handler("tuple"), query.tuple_factory)


@pytest.mark.parametrize("rows", decoding.ROWS)
def test_marked_and_ordered_factories_are_kept_and_fed_fast_tuples(impl, rows):
    marked = Marked()
    for factory in (marked, impl.ordered_dict_factory):
        handler, kept = decoding.route(factory, rows)
        assert handler is decoding.handler("tuple") and kept is factory


@pytest.mark.parametrize("rows", decoding.ROWS)
@pytest.mark.parametrize("factory", DRIVER_PATH, ids=DRIVER_PATH_IDS)
def test_anything_else_keeps_the_drivers_path(factory, rows):
    handler, kept = decoding.route(factory, rows)
    assert handler is ProtocolHandler and kept is factory


def test_the_kind_of_rows_is_checked():
    with pytest.raises(ValueError, match="rows must be one of"):
        decoding.route(query.tuple_factory, "tuple")
    with pytest.raises(ValueError, match="named or dict rows"):
        decoding._ROUTER.route(query.tuple_factory, _routes.TUPLE)
    with pytest.raises(ValueError, match="named or dict rows"):
        _routes.RequestRouter(decoding._ROUTER, _routes.TUPLE)
    with pytest.raises(ValueError, match="rows must be one of"):
        decoding.handler("ordered")
    assert decoding.handler("tuple").__name__ == "FastpathTupleProtocolHandler"


def test_the_answer_cache_is_bounded_and_never_confuses_two_objects():
    router = decoding._ROUTER
    router.cache_clear()
    made = [Marked() if i % 2 else Unmarked() for i in range(3 * _routes.ROUTE_CACHE_SIZE)]
    for _ in range(2):
        for factory in made:
            assert decoding.route(factory)[0] is (decoding.handler("tuple") if factory.__pyfactories_factory__
                                                  else ProtocolHandler)
            assert router.cached <= _routes.ROUTE_CACHE_SIZE
    del made
    gc.collect()
    for _ in range(_routes.ROUTE_CACHE_SIZE):  # new objects may reuse the ids of the forgotten ones
        assert decoding.route(Unmarked())[0] is ProtocolHandler
        assert decoding.route(Marked())[0] is decoding.handler("tuple")


class FakeFuture:
    def __init__(self, row_factory, handler=ProtocolHandler):
        self.row_factory = row_factory
        self._protocol_handler = handler


@pytest.mark.parametrize("rows", decoding.ROWS)
def test_the_request_listener_applies_the_route(impl, rows):
    listener = decoding._LISTENERS[rows]
    marked = Marked()
    for factory in (query.named_tuple_factory, impl.cached_named_tuple_factory, impl.dict_factory,
                    query.tuple_factory, marked, impl.ordered_dict_factory, *DRIVER_PATH):
        future = FakeFuture(factory)
        listener(future)
        assert (future._protocol_handler, future.row_factory) == decoding.route(factory, rows)


def test_a_handler_someone_else_set_is_left_alone():
    class Own(ProtocolHandler):
        pass

    future = FakeFuture(query.named_tuple_factory, Own)
    decoding._LISTENERS["named"](future)
    assert (future._protocol_handler, future.row_factory) == (Own, query.named_tuple_factory)


def routed_rows(factory, body, **kwargs):
    """Rows of ``body`` decoded the way a routed request's are, then given to its future's factory."""
    handler, kept = decoding.route(factory)
    msg = decode(handler, body, **kwargs)
    return kept(msg.column_names, msg.parsed_rows)


def driver_rows(factory, body, **kwargs):
    msg = decode(ProtocolHandler, body, **kwargs)
    return factory(msg.column_names, msg.parsed_rows)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(result=result_sets(), protocol_version=st.sampled_from([4, 5]))
def test_routed_rows_equal_the_factorys_own_rows(impl, result, protocol_version):
    columns, rows = result
    body = rows_body(columns, rows, protocol_version)
    for factory in (query.named_tuple_factory, impl.cached_named_tuple_factory, query.dict_factory, impl.dict_factory,
                    query.tuple_factory, impl.ordered_dict_factory, Marked(), users_factory):
        ours = routed_rows(factory, body, protocol_version=protocol_version)
        theirs = driver_rows(factory, body, protocol_version=protocol_version)
        assert_same(ours, theirs)


def test_tuple_rows_are_the_drivers_tuples_and_tracked_like_tuples():
    columns = [(f"c{i}", t) for i, (t, _) in enumerate(SAMPLES)]
    body = rows_body(columns, [[values[0] for _, values in SAMPLES], [None] * len(SAMPLES)])
    ours = decode(decoding.handler("tuple"), body).parsed_rows
    theirs = decode(ProtocolHandler, body).parsed_rows
    assert_same(ours, theirs)
    assert all(type(row) is tuple for row in ours)
    assert gc.is_tracked(ours[0])  # it holds lists, sets, dicts
    assert not gc.is_tracked(ours[1])  # only None: nothing to collect
    atoms = rows_body([("a", cqltypes.Int32Type), ("b", cqltypes.UTF8Type)], [[1, "x"]])
    assert not gc.is_tracked(decode(decoding.handler("tuple"), atoms).parsed_rows[0])


def test_a_marked_factory_gets_the_drivers_column_names_and_tuples():
    marked = Marked()
    body = rows_body([("k", cqltypes.Int32Type), ("v", cqltypes.UTF8Type)], [[1, "a"], [2, None]])
    assert routed_rows(marked, body) == [("marked", 1, "a"), ("marked", 2, None)]
    msg = decode(ProtocolHandler, body)
    assert marked.calls == [(msg.column_names, msg.parsed_rows)]
    assert all(type(row) is tuple for row in marked.calls[0][1])


def test_cache_info_counts_each_kind():
    body = rows_body([("k", cqltypes.Int32Type)], [[1]])
    before = decoding.cache_info()
    assert set(before) == {"named", "dict", "tuple"}
    for _ in range(2):
        decode(decoding.handler("tuple"), body)
    hits, misses = decoding.cache_info()["tuple"]
    assert hits + misses == sum(before["tuple"]) + 2 and hits >= before["tuple"][0] + 1
    assert decoding.cache_info()["named"] == before["named"]
