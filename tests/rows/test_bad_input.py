"""Bad input gets a clear TypeError/ValueError from both implementations, never a crash."""

import gc
import sys
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FACTORIES = ["cached_named_tuple_factory", "dict_factory", "ordered_dict_factory"]


@pytest.fixture(params=FACTORIES)
def factory(impl, request):
    return getattr(impl, request.param)


@pytest.mark.parametrize(
    "colnames, rows, error, message",
    [
        (["a"], None, TypeError, "rows must be a list of rows, not NoneType"),
        (["a"], iter([(1,)]), TypeError, "rows must be a list of rows, not list_iterator"),
        (["a"], {(1,)}, TypeError, "rows must be a list of rows, not set"),
        (["a"], [(1,), 5], TypeError, "row 1 must be a tuple or list, not int"),
        (["a"], ["x"], TypeError, "row 0 must be a tuple or list, not str"),
        (["a", "b"], [(1, 2), (1,)], ValueError, "row 1 has 1 values but there are 2 columns"),
        (["a"], [(1, 2)], ValueError, "row 0 has 2 values but there are 1 columns"),
        (["a"], [()], ValueError, "row 0 has 0 values but there are 1 columns"),
        (["a", 1], [(1, 2)], TypeError, "column name 1 must be str, not int"),
        ([None], [(1,)], TypeError, "column name 0 must be str, not NoneType"),
        ([b"a"], [(1,)], TypeError, "column name 0 must be str, not bytes"),
        ("ab", [(1, 2)], TypeError, "colnames must be a list or tuple of str, not str"),
        (None, [], TypeError, "colnames must be a list or tuple of str, not NoneType"),
    ],
)
def test_clear_errors(factory, colnames, rows, error, message):
    with pytest.raises(error) as excinfo:
        factory(colnames, rows)
    assert str(excinfo.value) == message


def test_error_after_a_cache_hit(factory):
    factory(["a", "b"], [(1, 2)])
    with pytest.raises(ValueError, match="row 0 has 3 values"):
        factory(["a", "b"], [(1, 2, 3)])
    with pytest.raises(TypeError, match="column name 1 must be str"):
        factory(["a", 2], [(1, 2)])


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    colnames=st.one_of(st.none(), st.integers(), st.lists(st.one_of(st.text(max_size=3), st.integers()), max_size=4)),
    rows=st.one_of(
        st.none(),
        st.text(max_size=3),
        st.lists(st.one_of(st.none(), st.integers(), st.lists(st.integers(), max_size=5), st.tuples(st.integers())), max_size=4),
    ),
)
def test_arbitrary_input_returns_or_raises_cleanly(factory, colnames, rows):
    try:
        out = factory(colnames, rows)
    except (TypeError, ValueError):
        return
    assert len(out) == len(rows)


def test_no_reference_or_memory_leak(factory):
    """Many calls, good and bad: reference counts of the inputs and traced memory stay flat."""
    cols = ["alpha", "beta", "gamma"]
    value = object()
    rows = [(value, 2, "x")] * 50
    bad_rows = [(value, 2, "x"), (value,)]

    def work():
        for _ in range(200):
            factory(cols, rows)
            factory(list(cols), rows)
            with pytest.raises(ValueError):
                factory(cols, bad_rows)

    work()  # warm caches and interpreter state
    gc.collect()
    refs_before = (sys.getrefcount(value), sys.getrefcount(cols[0]), sys.getrefcount(rows))
    tracemalloc.start()
    try:
        work()
        gc.collect()
        first, _ = tracemalloc.get_traced_memory()
        work()
        work()
        gc.collect()
        second, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (sys.getrefcount(value), sys.getrefcount(cols[0]), sys.getrefcount(rows)) == refs_before
    # 600 more calls (30,000 rows) may not keep memory: allow allocator noise only.
    assert second - first < 16 * 1024


def test_rows_keep_their_values_alive(impl):
    value = object()
    before = sys.getrefcount(value)
    out = impl.cached_named_tuple_factory(["a", "b"], [(value, value)] * 10)
    assert sys.getrefcount(value) == before + 20
    del out
    assert sys.getrefcount(value) == before


DRIVER = {"cached_named_tuple_factory": "named_tuple_factory", "dict_factory": "dict_factory",
          "ordered_dict_factory": "ordered_dict_factory"}


@pytest.mark.parametrize("name", FACTORIES)
@pytest.mark.parametrize("change", ["append", "pop", "clear", "append twice"])
@pytest.mark.parametrize("where", [0, 1, 2])
def test_rows_that_change_the_list_while_read_as_the_driver_reads_them(impl, name, change, where):
    """A row whose ``__iter__`` grows or shrinks the rows list being read (at its end): the rows are read
    to the list's current end, as the driver's ``for row in rows`` reads them (no row lost, no error)."""
    from cassandra import query

    def run(factory):
        rows = [(0,), (1,), (2,)]

        class Changing(list):
            def __iter__(self):
                {"append": lambda: rows.append((7,)), "pop": rows.pop, "clear": rows.clear,
                 "append twice": lambda: rows.extend([(7,), (8,)])}[change]()
                return list.__iter__(self)

        rows[where] = Changing([where])
        out = factory(["a"], rows)
        return [(type(row).__name__ if isinstance(row, dict) else "tuple", tuple(row.values())
                 if isinstance(row, dict) else tuple(row)) for row in out]

    got = run(getattr(impl, name))
    assert got == run(getattr(query, DRIVER[name]))
    assert len(got) == {"append": 4, "append twice": 5, "pop": 2 if where < 2 else 3, "clear": where + 1}[change]


def _walks_every_list_of(size):
    """A row whose ``__iter__`` reads every list of ``size`` items the collector knows of, as code that walks
    ``gc.get_objects()`` would: the factory's own half-filled result must not be one of them."""

    class Walking(list):
        def __iter__(self):
            for found in gc.get_objects():
                if type(found) is list and len(found) == size:
                    list(found)  # reads every item: a slot not yet filled would crash here
            return list.__iter__(self)

    return Walking


@pytest.mark.parametrize("name", FACTORIES)
def test_a_row_that_walks_the_collectors_objects_never_sees_the_half_built_result(impl, name):
    rows = [(k,) for k in range(50)]
    rows[0] = _walks_every_list_of(50)([0])
    out = getattr(impl, name)(["a"], rows)
    assert [tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in out] == [(k,) for k in range(50)]
    assert gc.is_tracked(out)  # known to the collector again once full


def test_a_typed_row_constructor_that_walks_the_collectors_objects_never_sees_the_half_built_result(impl):
    walking = _walks_every_list_of(50)

    def build(a):
        walking.__iter__([])  # the same walk, from the constructor
        return a

    built = impl.args_row(build)(["a"], [(k,) for k in range(50)])
    assert built == list(range(50))
    assert gc.is_tracked(built)


@pytest.mark.parametrize("name", FACTORIES)
def test_a_row_that_shrinks_the_list_then_raises_raises_its_error(impl, name):
    """The rows list shrinks under the factory, then the row's own iteration fails: its error, as from
    the driver's factory, and nothing of the half-built result is left behind."""
    from cassandra import query

    class Failing(Exception):
        pass

    def run(factory):
        value = object()
        rows = [(value,), *((k,) for k in range(1, 10))]

        class ShrinksThenFails(list):
            def __iter__(self):
                del rows[2:]
                raise Failing("row iteration failed")

        rows[1] = ShrinksThenFails([1])
        before = sys.getrefcount(value)
        with pytest.raises(Failing, match="row iteration failed"):
            factory(["a"], rows)
        gc.collect()
        return len(rows), sys.getrefcount(value) - before  # the first row built and dropped again

    assert run(getattr(impl, name)) == run(getattr(query, DRIVER[name])) == (2, 0)
