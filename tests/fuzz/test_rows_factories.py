"""Row factories (named tuples, dicts, ordered dicts), compiled against the pure-Python twin and the driver.

Every input is drawn as a recipe (plain data) and built afresh for each implementation, because the
adversarial objects keep state: list/tuple subclasses whose ``__len__``/``__getitem__`` lie about their
storage, whose ``__iter__`` yields fewer or more values, or mutates the rows list and the column list
being read; column names that are ``str`` subclasses with lying ``__eq__``/``__hash__``. The compiled
factory and the twin must give the same rows or raise the same exception type; when they answer, the
driver's factory (given plain copies of the names) gives the same rows too.
"""

from collections import OrderedDict

import pytest
from cassandra import query
from hypothesis import given
from hypothesis import strategies as st

from pyfactories.rows import _rows_py
from pyfactories.rows import _rows
from tests.fuzz.conftest import fuzz
from tests.strategies import column_names, values

FACTORIES = ("cached_named_tuple_factory", "dict_factory", "ordered_dict_factory")
DRIVER = {"cached_named_tuple_factory": query.named_tuple_factory, "dict_factory": query.dict_factory,
          "ordered_dict_factory": query.ordered_dict_factory}


@pytest.fixture(autouse=True)
def _cache_size_restored():
    """Some rows shrink the caches from inside a call (set_cache_size): back to the default afterwards."""
    yield
    for module in (_rows, _rows_py):
        module.set_cache_size(1024)
        module.cache_clear()


# -- adversarial objects ------------------------------------------------------------------------------


class SubStr(str):
    """A plain str subclass."""


class LyingStr(str):
    """Equal to everything, one hash for all: a cache keyed by it would mix column lists."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __hash__(self):
        return 0


class LyingList(list):
    """Its __len__ and __getitem__ lie; its iteration is what its storage holds (or what `shared` says)."""

    def __len__(self):
        return 0

    def __getitem__(self, i):
        return "lie"


class LyingTuple(tuple):
    def __len__(self):
        return 99

    def __getitem__(self, i):
        return "lie"


class Yields(list):
    """Stores one thing, yields another (fewer or more values), and may mutate shared containers first."""

    def __iter__(self):
        for action in self.actions:
            action()
        return iter(self.yielded)


def _mutations(shared, kinds):
    out = []
    for kind in kinds:
        if kind == "pop_row":
            out.append(lambda: shared["rows"].pop() if type(shared["rows"]) is list and shared["rows"] else None)
        elif kind == "append_row":
            out.append(lambda: shared["rows"].append(("extra",)) if type(shared["rows"]) is list else None)
        elif kind == "grow_colnames":
            out.append(lambda: shared["colnames"].append("zz") if isinstance(shared["colnames"], list) else None)
        elif kind == "clear_colnames":
            out.append(lambda: shared["colnames"].clear() if isinstance(shared["colnames"], list) else None)
        elif kind == "clear_caches":
            out.append(lambda: (_rows.cache_clear(), _rows_py.cache_clear()))
        elif kind == "set_cache_size":
            out.append(lambda: (_rows.set_cache_size(1), _rows_py.set_cache_size(1)))
    return out


# -- recipes ------------------------------------------------------------------------------------------

name_kinds = st.sampled_from(["str", "str", "str", "sub", "lying"])
container_kinds = st.sampled_from(["list", "list", "tuple", "lying_list", "lying_tuple"])
row_kinds = st.sampled_from(["tuple", "tuple", "list", "lying_list", "lying_tuple", "yields"])
actions = st.lists(st.sampled_from(["pop_row", "append_row", "grow_colnames", "clear_colnames", "clear_caches",
                                    "set_cache_size"]), max_size=2)


@st.composite
def recipes(draw):
    names = draw(st.lists(st.tuples(column_names, name_kinds), max_size=8))
    ncols = len(names)
    rows = []
    for _ in range(draw(st.integers(0, 6))):
        size = draw(st.sampled_from([ncols, ncols, ncols, max(ncols - 1, 0), ncols + 1]))
        stored = draw(st.lists(values, min_size=size, max_size=size))
        kind = draw(row_kinds)
        yielded = stored
        if kind == "yields":
            yielded = draw(st.sampled_from([stored, stored[:-1], stored + [0], list(reversed(stored))]))
        rows.append((kind, stored, yielded, draw(actions) if kind == "yields" else []))
    return draw(container_kinds), names, draw(container_kinds), rows


def _container(kind, items):
    return {"list": list, "tuple": tuple, "lying_list": LyingList, "lying_tuple": LyingTuple}[kind](items)


def build(recipe):
    """Fresh objects for one run: (colnames, rows, plain names for the driver)."""
    colnames_kind, names, rows_kind, rows = recipe
    shared = {}
    made = [{"str": str, "sub": SubStr, "lying": LyingStr}[kind](text) for text, kind in names]
    colnames = _container(colnames_kind, made)
    shared["colnames"] = colnames
    built = []
    for kind, stored, yielded, mutations in rows:
        if kind == "yields":
            row = Yields(stored)
            row.yielded, row.actions = list(yielded), _mutations(shared, mutations)
        else:
            row = _container({"tuple": "tuple", "list": "list"}.get(kind, kind), stored)
        built.append(row)
    rows = _container(rows_kind, built)
    shared["rows"] = rows
    return colnames, rows, [str.__str__(n) for n in made]


def outcome(call):
    try:
        return "value", call()
    except (TypeError, ValueError, IndexError) as exc:
        return "raised", type(exc)


def shape(rows):
    """What a row factory's result says: each row's type name, fields or keys, and values."""
    out = []
    for row in rows:
        if isinstance(row, tuple):
            out.append(("tuple", type(row)._fields, tuple(row)))
        else:
            out.append((type(row).__name__, list(row.keys()), list(row.values())))
    return out


def _run(name, recipe):
    compiled_in, twin_in = build(recipe), build(recipe)
    got = outcome(lambda: getattr(_rows, name)(compiled_in[0], compiled_in[1]))
    want = outcome(lambda: getattr(_rows_py, name)(twin_in[0], twin_in[1]))
    if got[0] == "value" and want[0] == "value":
        assert shape(got[1]) == shape(want[1])
    else:
        assert got == want
    return got, build(recipe)


# -- properties ---------------------------------------------------------------------------------------


@fuzz
@given(recipe=recipes(), name=st.sampled_from(FACTORIES))
def test_rows_factories_match_the_twin_on_lying_input(recipe, name):
    got, (_, rows, plain_names) = _run(name, recipe)
    if got[0] == "value":
        # The driver reads the rows through their iteration too: same rows, named as it names them.
        driver_rows = [tuple(row) for row in rows]
        assert shape(got[1]) == shape(DRIVER[name](plain_names, driver_rows))


@fuzz
@given(names=st.lists(st.tuples(column_names, name_kinds), min_size=1, max_size=8),
       row=st.lists(values, min_size=8, max_size=8))
def test_rows_lying_str_column_names_never_share_a_class(names, row):
    """Two column lists that compare equal only through lying __eq__/__hash__ get their own class each."""
    made = [{"str": str, "sub": SubStr, "lying": LyingStr}[kind](text) for text, kind in names]
    plain = [str.__str__(n) for n in made]
    values_row = tuple(row[: len(made)])
    for colnames in (plain, made, [LyingStr("zz" + p) for p in plain], made):
        got = _rows.cached_named_tuple_factory(colnames, [values_row])
        want = query.named_tuple_factory([str.__str__(n) for n in colnames], [values_row])
        assert type(got[0])._fields == type(want[0])._fields
        assert tuple(got[0]) == tuple(want[0])
        assert _rows.dict_factory(colnames, [values_row]) == \
            query.dict_factory([str.__str__(n) for n in colnames], [values_row])
        assert list(_rows.ordered_dict_factory(colnames, [values_row])[0].items()) == \
            list(OrderedDict(zip([str.__str__(n) for n in colnames], values_row)).items())


@fuzz
@given(recipe=recipes())
def test_rows_factories_called_from_inside_a_row_iteration(recipe):
    """A row whose __iter__ calls the factories again (other columns) before yielding its values."""
    colnames_kind, names, rows_kind, rows = recipe

    def run(module):
        colnames, built, _ = build(recipe)

        class Reentrant(list):
            def __iter__(self):
                module.cached_named_tuple_factory(["x", "y"], [(1, 2)])
                module.dict_factory(list(colnames), [])
                module.cache_clear()
                return list.__iter__(self)

        rows = list(built) + [Reentrant(list(range(len(names))))]
        return outcome(lambda: shape(module.cached_named_tuple_factory(colnames, rows)))

    assert run(_rows) == run(_rows_py)
