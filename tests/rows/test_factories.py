"""Rows equal the driver's rows, factory by factory (differential, both implementations)."""

import logging
import pickle
from collections import OrderedDict

import pytest
from cassandra import query
from hypothesis import HealthCheck, given, settings

from ..strategies import result_sets

SHARED_FIXTURE = settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])

PAIRS = [
    ("cached_named_tuple_factory", query.named_tuple_factory),
    ("dict_factory", query.dict_factory),
    ("ordered_dict_factory", query.ordered_dict_factory),
]


def assert_same_rows(ours, theirs):
    assert isinstance(ours, list)
    assert len(ours) == len(theirs)
    for mine, driver in zip(ours, theirs):
        assert type(mine).__name__ == type(driver).__name__
        assert isinstance(mine, (OrderedDict if isinstance(driver, OrderedDict) else type(driver).__mro__[1]))
        assert mine == driver
        if isinstance(driver, dict):
            assert list(mine.items()) == list(driver.items())  # same key order
        else:
            assert type(mine)._fields == type(driver)._fields
            for field in driver._fields:
                assert getattr(mine, field) is getattr(driver, field)


@pytest.mark.parametrize("ours_name, driver_factory", PAIRS, ids=[p[0] for p in PAIRS])
@SHARED_FIXTURE
@given(result_sets())
def test_rows_equal_driver_rows(impl, ours_name, driver_factory, result):
    colnames, rows = result
    logging.disable(logging.WARNING)  # both sides may warn about names: tested in test_names
    try:
        expected = driver_factory(colnames, rows)
        assert_same_rows(getattr(impl, ours_name)(colnames, rows), expected)
        # A second call hits the cache and must give the same answer.
        assert_same_rows(getattr(impl, ours_name)(list(colnames), rows), expected)
    finally:
        logging.disable(logging.NOTSET)


def test_exact_dict_type(impl):
    cols = ["a", "b"]
    rows = [(1, 2)]
    assert type(impl.dict_factory(cols, rows)[0]) is dict
    assert type(impl.ordered_dict_factory(cols, rows)[0]) is OrderedDict


def test_duplicate_columns_last_value_wins_like_driver(impl):
    cols, rows = ["a", "b", "a"], [(1, 2, 3)]
    assert impl.dict_factory(cols, rows) == query.dict_factory(cols, rows) == [{"a": 3, "b": 2}]
    assert impl.ordered_dict_factory(cols, rows) == query.ordered_dict_factory(cols, rows)


def test_list_rows_and_tuple_inputs_accepted(impl):
    cols = ("x", "y")
    rows = ([1, 2], (3, 4))
    assert impl.cached_named_tuple_factory(cols, rows) == [(1, 2), (3, 4)]
    assert impl.dict_factory(cols, list(rows)) == [{"x": 1, "y": 2}, {"x": 3, "y": 4}]


def test_empty_results(impl):
    assert impl.cached_named_tuple_factory(["a"], []) == []
    assert impl.dict_factory(["a"], []) == []
    assert impl.ordered_dict_factory(["a"], []) == []


def test_no_columns_on_an_empty_cache(impl):
    impl.cache_clear()
    assert impl.cached_named_tuple_factory([], [()]) == query.named_tuple_factory([], [()])
    impl.cache_clear()
    assert impl.dict_factory([], [(), ()]) == [{}, {}]


def test_rows_are_new_objects(impl):
    rows = [(1, 2)]
    out = impl.cached_named_tuple_factory(["a", "b"], rows)
    assert out[0] is not rows[0] and out is not rows


def test_class_is_reused_for_equal_column_lists(impl):
    first = impl.cached_named_tuple_factory(["a", "b"], [(1, 2)])[0]
    again = impl.cached_named_tuple_factory(["a", "b"], [(3, 4)])[0]
    other = impl.cached_named_tuple_factory(["a", "c"], [(3, 4)])[0]
    assert type(first) is type(again)
    assert type(other) is not type(first)
    info = impl.cache_info()
    assert (info.hits, info.misses, info.currsize) == (1, 2, 2)


def test_str_subclass_column_names(impl):
    class Name(str):
        def __hash__(self):
            return 1

    cols = [Name("a"), Name("b")]
    assert impl.cached_named_tuple_factory(cols, [(1, 2)])[0]._fields == ("a", "b")
    assert impl.dict_factory(cols, [(1, 2)]) == [{"a": 1, "b": 2}]


def test_rows_support_namedtuple_api(impl):
    row = impl.cached_named_tuple_factory(["k", "v"], [(1, "x")])[0]
    assert row.k == 1 and row[1] == "x"
    assert row._asdict() == {"k": 1, "v": "x"}
    assert row._replace(v="y") == (1, "y")
    assert repr(row) == "Row(k=1, v='x')"


def test_rows_pickle_in_process(impl):
    rows = impl.cached_named_tuple_factory(["a", "[applied]", "if"], [(1, True, None)])
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(rows, protocol=protocol))
        assert back == rows
        assert type(back[0])._fields == type(rows[0])._fields


def test_driver_rows_do_not_pickle():
    """The gap this package fills: the driver's named rows cannot cross a process boundary."""
    rows = query.named_tuple_factory(["a"], [(1,)])
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(rows)


def test_rows_of_atomic_values_are_not_tracked_but_cycles_are_collected(impl):
    """Like CPython's own tuples: a row that cannot be part of a cycle is not tracked by the collector."""
    import gc
    import weakref

    rows = impl.cached_named_tuple_factory(["a", "b"], [(1, "x"), ([1], "y"), ((1, 2), None)])
    if impl.__name__.endswith("_speedups"):
        assert [gc.is_tracked(row) for row in rows] == [False, True, False]

    class Box(list):
        pass

    box = Box()
    row = impl.cached_named_tuple_factory(["a", "b"], [(box, 1)])[0]
    box.append(row)
    alive = weakref.ref(box)
    del box, row
    gc.collect()
    assert alive() is None


class StrName(str):
    pass


@pytest.mark.parametrize("colnames", [["a", "b", "c"], ["a", "b", "a"], [StrName("a"), "b", "c"]],
                         ids=["distinct", "repeated", "str-subclass"])
def test_dict_rows_are_tracked_exactly_like_the_drivers(impl, colnames):
    """Dict rows follow CPython's rule for dicts (tracked once they hold a container); values land under
    the right keys whatever the names, including where the compiled module stores them into the copy directly."""
    import gc
    import weakref

    class Box(list):
        pass

    values = [(1, "x", None), ([1], "y", 2.5), ((1, 2), None, 3), ((1, [2]), b"z", 4), (1, 2, Box())]
    ours, theirs = impl.dict_factory(colnames, values), query.dict_factory(colnames, values)
    assert ours == theirs
    assert [list(r.items()) for r in ours] == [list(r.items()) for r in theirs]
    assert all(type(k) is str for r in ours for k in r)  # str subclasses become plain str (column_key)
    plain = query.dict_factory([str.__str__(c) for c in colnames], values)
    assert [gc.is_tracked(r) for r in ours] == [gc.is_tracked(r) for r in plain]
    del plain
    box = values[-1][2]
    box.append(ours[-1])  # row -> box -> row: a cycle the collector must see
    gone = weakref.ref(box)
    del ours, theirs, values, box
    gc.collect()
    assert gone() is None
