"""Typed rows (class_row, kwargs_row, args_row): both implementations, against the driver's named rows."""

from __future__ import annotations

import dataclasses
import keyword
import logging
import pickle
import sys
import threading
from typing import NamedTuple

import attrs
import msgspec
import pytest
from cassandra import query
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyfactories
from pyfactories.rows import _typed_py

from ..strategies import result_sets

SHARED_FIXTURE = settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])


@dataclasses.dataclass
class User:
    id: int
    name: str
    email: str | None = None


@dataclasses.dataclass(slots=True)
class SlottedUser:
    id: int
    name: str
    email: str | None = None


@dataclasses.dataclass(frozen=True)
class FrozenUser:
    id: int
    name: str


@dataclasses.dataclass
class WithFactory:
    id: int
    tags: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class PostInit:
    id: int
    name: str
    upper: str = dataclasses.field(init=False)

    def __post_init__(self):
        self.upper = self.name.upper()


@dataclasses.dataclass(kw_only=True)
class KwOnly:
    id: int
    name: str = "n"


@dataclasses.dataclass
class Base:
    id: int


@dataclasses.dataclass
class Derived(Base):
    name: str


@dataclasses.dataclass
class WithInitVar:
    id: int
    salt: dataclasses.InitVar[str]
    digest: str = dataclasses.field(init=False, default="")

    def __post_init__(self, salt):
        self.digest = f"{salt}{self.id}"


@attrs.define
class AttrsUser:
    id: int
    _secret: str  # attrs' alias: the constructor takes `secret`
    name: str = attrs.field(default="n", validator=attrs.validators.instance_of(str))


@attrs.frozen
class AttrsFrozen:
    id: int
    name: str


class StructUser(msgspec.Struct):
    id: int
    name: str
    email: str | None = None


class TupleUser(NamedTuple):
    id: int
    name: str
    email: str | None = None


class PlainUser:
    def __init__(self, id, name, *, email=None):
        self.id, self.name, self.email = id, name, email

    def __eq__(self, other):
        return type(other) is PlainUser and vars(self) == vars(other)


class AnyKeywords:
    def __init__(self, id, **rest):
        self.id, self.rest = id, rest


COLS = ["id", "name", "email"]
ROWS = [(1, "ann", "a@x"), (2, "bob", None)]


@pytest.mark.parametrize("cls", [User, SlottedUser, StructUser, TupleUser, PlainUser])
def test_rows_are_the_constructors_rows(impl, cls):
    got = impl.class_row(cls)(COLS, ROWS)
    assert got == [cls(id=1, name="ann", email="a@x"), cls(id=2, name="bob", email=None)]
    assert all(type(row) is cls for row in got)
    # named rows from the driver, passed as keywords: the same objects
    assert got == [cls(**r._asdict()) for r in query.named_tuple_factory(COLS, ROWS)]


def test_defaults_fill_absent_columns(impl):
    for cls in (User, SlottedUser, StructUser, TupleUser, PlainUser):
        assert impl.class_row(cls)(["name", "id"], [("ann", 1)]) == [cls(id=1, name="ann")]


def test_dataclass_variants(impl):
    assert impl.class_row(FrozenUser)(["id", "name"], [(1, "a")]) == [FrozenUser(1, "a")]
    rows = impl.class_row(WithFactory)(["id"], [(1,), (2,)])
    assert rows == [WithFactory(1), WithFactory(2)] and rows[0].tags is not rows[1].tags
    assert impl.class_row(PostInit)(["id", "name"], [(1, "ann")])[0].upper == "ANN"
    assert impl.class_row(KwOnly)(["id"], [(1,)]) == [KwOnly(id=1)]
    assert impl.class_row(Derived)(["name", "id"], [("n", 1)]) == [Derived(1, "n")]
    assert impl.class_row(WithInitVar)(["id", "salt"], [(1, "s")])[0].digest == "s1"
    with pytest.raises(pyfactories.ColumnMismatch, match="missing required field 'salt'"):
        impl.class_row(WithInitVar)(["id"], [(1,)])
    with pytest.raises(pyfactories.ColumnMismatch, match="unexpected column 'upper'"):
        impl.class_row(PostInit)(["id", "name", "upper"], [])


def test_attrs_classes(impl):
    row = impl.class_row(AttrsUser)(["id", "secret"], [(1, "s")])[0]
    assert row == AttrsUser(1, "s") and row._secret == "s"
    with pytest.raises(TypeError, match="'name' must be <class 'str'>"):  # validators run
        impl.class_row(AttrsUser)(["id", "secret", "name"], [(1, "s", 5)])
    # the driver's cleaning drops a leading "_": the column `_secret` is `secret`
    assert impl.class_row(AttrsUser)(["id", "_secret"], [(1, "s")]) == [AttrsUser(1, "s")]
    assert impl.class_row(AttrsFrozen)(["id", "name"], [(1, "a")]) == [AttrsFrozen(1, "a")]


def test_any_keyword_constructor_takes_every_column(impl):
    row = impl.class_row(AnyKeywords)(["id", "[applied]", "x"], [(1, True, 2)])[0]
    assert row.id == 1 and row.rest == {"applied": True, "x": 2}


def test_column_names_are_cleaned_like_the_drivers_named_rows(impl):
    @dataclasses.dataclass
    class Odd:
        applied: bool
        system_count: int
        total: int

    cols = ["[applied]", "system.count(*)", '"total"']
    rows = [(True, 3, 4)]
    driver = query.named_tuple_factory(cols, rows)
    assert type(driver[0])._fields == ("applied", "system_count", "total")
    assert impl.class_row(Odd)(cols, rows) == [Odd(**r._asdict()) for r in driver]


def test_missing_and_unexpected_columns_are_named(impl):
    factory = impl.class_row(User)
    with pytest.raises(pyfactories.ColumnMismatch) as info:
        factory(["id", "[nme]", "x"], [(1, "a", 2)])
    err = info.value
    assert isinstance(err, ValueError)
    assert str(err) == (
        "tests.rows.test_class_rows.User cannot be built from columns ['id', '[nme]', 'x']: missing required field "
        "'name'; unexpected columns '[nme]' (as 'nme'), 'x' (extra='ignore' drops them)")
    assert (err.cls, err.columns, err.missing, err.unexpected, err.duplicates) == (
        User, ("id", "[nme]", "x"), ("name",), ("[nme]", "x"), ())


def test_extra_ignore_drops_undeclared_columns(impl):
    factory = impl.class_row(User, extra="ignore")
    assert factory.extra == "ignore" and factory is not impl.class_row(User)
    assert factory(["id", "name", "x", "[applied]"], [(1, "a", 2, True)]) == [User(1, "a")]
    with pytest.raises(pyfactories.ColumnMismatch, match=r"missing required fields 'id', 'name'$"):
        factory(["x"], [])


def test_duplicate_cleaned_names_are_refused(impl):
    with pytest.raises(pyfactories.ColumnMismatch) as info:
        impl.class_row(User)(["id", "name", "[name]"], [(1, "a", "b")])
    assert str(info.value).endswith("columns 'name', '[name]' all map to field 'name'")
    assert info.value.duplicates == ("name",)
    # an undeclared duplicate is only unexpected (or dropped)
    assert impl.class_row(User, extra="ignore")(["id", "name", "x", "[x]"], [(1, "a", 2, 3)]) == [User(1, "a")]


def test_the_error_is_raised_every_time_and_nothing_is_cached(impl):
    factory = impl.class_row(User)
    factory.cache_clear()
    for _ in range(2):
        with pytest.raises(pyfactories.ColumnMismatch):
            factory(["id"], [(1,)])
    assert factory.cache_info().currsize == 0


@pytest.mark.parametrize("bad, message", [
    (5, "class_row() needs a class, not int (use kwargs_row for a function)"),
    (len, "class_row() needs a class, not builtin_function_or_method (use kwargs_row for a function)"),
    (int, "class_row(): cannot tell which keyword arguments int takes (no signature found for builtin type "
          "<class 'int'>)"),
])
def test_bad_classes_are_a_clear_type_error(impl, bad, message):
    with pytest.raises(TypeError) as info:
        impl.class_row(bad)
    assert str(info.value) == message


def test_positional_only_classes_are_refused(impl):
    class Positional:
        def __init__(self, a, /):
            self.a = a

    with pytest.raises(TypeError, match="needs positional argument 'a', so it cannot be built from keywords"):
        impl.class_row(Positional)


def test_extra_is_validated(impl):
    for bad in ("allow", None, 1):
        with pytest.raises(ValueError, match="extra must be 'error' or 'ignore'"):
            impl.class_row(User, extra=bad)
    with pytest.raises(TypeError):
        impl.class_row(User, "ignore")  # keyword only


def test_constructor_errors_propagate(impl):
    with pytest.raises(TypeError, match="'name' must be"):
        impl.class_row(AttrsUser)(["id", "secret", "name"], [(1, "s", None)])
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'upper'"):
        impl.class_row(PostInit)(["id", "name"], [(1, None)])  # __post_init__ runs


@pytest.mark.parametrize("colnames, rows, error, message", [
    (["id", "name"], None, TypeError, "rows must be a list of rows, not NoneType"),
    (["id", "name"], [(1, "a"), 5], TypeError, "row 1 must be a tuple or list, not int"),
    (["id", "name"], [(1, "a"), (1,)], ValueError, "row 1 has 1 values but there are 2 columns"),
    (["id", 1], [], TypeError, "column name 1 must be str, not int"),
    ("id", [], TypeError, "colnames must be a list or tuple of str, not str"),
])
@pytest.mark.parametrize("make", ["class", "kwargs", "args"])
def test_bad_rows_and_columns(impl, make, colnames, rows, error, message):
    factory = {"class": lambda: impl.class_row(User), "kwargs": lambda: impl.kwargs_row(dict),
               "args": lambda: impl.args_row(lambda *a: a)}[make]()
    with pytest.raises(error) as info:
        factory(colnames, rows)
    assert str(info.value) == message


def test_no_row_is_built_when_a_later_row_is_bad(impl):
    built = []
    factory = impl.args_row(lambda *values: built.append(values))
    with pytest.raises(ValueError, match="row 2 has"):
        factory(["a"], [(1,), (2,), (3, 4)])
    assert built == []


def test_list_rows(impl):
    assert impl.class_row(SlottedUser)(COLS, [list(r) for r in ROWS]) == [SlottedUser(*r) for r in ROWS]


def test_kwargs_row_uses_the_column_names_as_dict_factory_does(impl):
    cols, rows = ["a", "[applied]", "a"], [(1, True, 3)]
    factory = impl.kwargs_row(dict)
    assert factory(cols, rows) == query.dict_factory(cols, rows) == [{"a": 3, "[applied]": True}]
    assert list(factory(cols, rows)[0]) == list(query.dict_factory(cols, rows)[0])  # same key order
    assert impl.kwargs_row(User)(COLS, ROWS) == [User(*r) for r in ROWS]


def test_args_row_passes_the_row_positionally(impl):
    assert impl.args_row(User)(["x", "y", "z"], ROWS) == [User(*r) for r in ROWS]
    assert impl.args_row(lambda *a: a)(["a", "a"], [(1, 2)]) == [(1, 2)]


def test_kwargs_and_args_need_a_callable(impl):
    for make in (impl.kwargs_row, impl.args_row):
        with pytest.raises(TypeError, match=r"_row\(\) needs a callable, not int"):
            make(3)


def test_factory_objects(impl):
    factory = impl.class_row(User)
    assert factory is impl.class_row(User) is impl.class_row(User, extra="error")
    assert factory.__pyfactories_factory__ is True and callable(factory)
    assert (factory.kind, factory.cls, factory.extra) == ("class", User, "error")
    assert repr(factory) == "class_row(tests.rows.test_class_rows.User, extra='error')"
    with pytest.raises(AttributeError):
        factory.func
    kw = impl.kwargs_row(dict)
    assert (kw.kind, kw.func, repr(kw)) == ("kwargs", dict, "kwargs_row(dict)") and kw is impl.kwargs_row(dict)
    args = impl.args_row(User)
    assert (args.kind, args.func) == ("args", User) and args is not impl.kwargs_row(User)
    with pytest.raises(AttributeError):
        args.cls


def test_callables_are_told_apart_by_identity(impl):
    class Unhashable:
        __hash__ = None

        def __init__(self, tag):
            self.tag = tag

        def __eq__(self, other):  # all equal: only identity tells them apart
            return True

        def __call__(self, *values):
            return (self.tag,) + values

    one, two = Unhashable(1), Unhashable(2)
    assert impl.args_row(one)(["a"], [(0,)]) == [(1, 0)] and impl.args_row(two)(["a"], [(0,)]) == [(2, 0)]
    assert impl.args_row(one) is impl.args_row(one) and impl.args_row(one) is not impl.args_row(two)


def test_the_factory_registry_is_bounded(impl):
    made = [impl.args_row(lambda *a, i=i: i) for i in range(_typed_py.FACTORY_CACHE_SIZE + 50)]
    assert made[-1](["a"], [(0,)]) == [_typed_py.FACTORY_CACHE_SIZE + 49]
    registry = impl._factories if hasattr(impl, "_factories") else _typed_py._factories
    assert len(registry) <= _typed_py.FACTORY_CACHE_SIZE


def test_plan_cache_is_bounded_and_counts(impl):
    factory = impl.class_row(User, extra="ignore")
    factory.cache_clear()
    for i in range(300):
        assert factory(["id", "name", f"x{i}"], [(i, "n", 0)]) == [User(i, "n")]
    info = factory.cache_info()
    assert info.currsize == info.maxsize == _typed_py.PLAN_CACHE_SIZE and info.misses == 300
    factory(["id", "name", "x299"], [(1, "n", 0)])
    assert factory.cache_info().hits == info.hits + 1


def test_rows_pickle_when_the_class_does(impl):
    for cls in (SlottedUser, User, StructUser, TupleUser, AttrsFrozen):
        cols = ["id", "name"]
        rows = impl.class_row(cls)(cols, [(1, "a")])
        assert pickle.loads(pickle.dumps(rows)) == rows


def test_threads_share_one_factory(impl):
    factory = impl.class_row(SlottedUser, extra="ignore")
    errors = []
    barrier = threading.Barrier(4)

    def work(tid):
        try:
            barrier.wait()
            for i in range(500):
                cols = ["id", "name", f"x{i % 7}"]
                assert factory(cols, [(tid, str(i), 0)]) == [SlottedUser(tid, str(i))]
                assert impl.class_row(SlottedUser, extra="ignore") is factory
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_public_names_are_the_chosen_implementations():
    assert pyfactories.class_row.__module__ == pyfactories.cached_named_tuple_factory.__module__
    assert pyfactories.ColumnMismatch is _typed_py.ColumnMismatch


identifiers = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True).filter(lambda s: not keyword.iskeyword(s))


@SHARED_FIXTURE
@given(data=st.data(), fields=st.lists(identifiers, min_size=1, max_size=8, unique=True))
def test_any_column_subset_matches_the_driver(impl, data, fields):
    """Random fields, some with defaults; random columns among them (bracketed as aliases are): driver's answer."""
    ndefaults = data.draw(st.integers(0, len(fields)))
    spec = [(name, object) for name in fields[: len(fields) - ndefaults]]
    spec += [(name, object, dataclasses.field(default=-1)) for name in fields[len(fields) - ndefaults:]]
    slots = data.draw(st.booleans())
    cls = dataclasses.make_dataclass("Random", spec, slots=slots)
    required = fields[: len(fields) - ndefaults]
    chosen = data.draw(st.lists(st.sampled_from(fields), unique=True).map(lambda c: required + [
        n for n in c if n not in required]))
    chosen = data.draw(st.permutations(chosen))
    cols = [data.draw(st.sampled_from([name, f"[{name}]", f"{name}()"])) for name in chosen]
    rows = data.draw(st.lists(st.tuples(*[st.one_of(st.integers(), st.text(max_size=3), st.none())] * len(cols)),
                              max_size=5))
    logging.disable(logging.WARNING)
    try:
        expected = [cls(**r._asdict()) for r in query.named_tuple_factory(cols, rows)]
    finally:
        logging.disable(logging.NOTSET)
    got = impl.class_row(cls)(cols, rows)
    assert got == expected and [type(r) for r in got] == [cls] * len(rows)


def test_msgspec_keyword_only_required_after_a_default(impl):
    class Late(msgspec.Struct, kw_only=True):
        a: int = 1
        b: int

    assert impl.class_row(Late)(["b"], [(2,)]) == [Late(b=2)]
    with pytest.raises(pyfactories.ColumnMismatch, match="missing required field 'b'"):
        impl.class_row(Late)(["a"], [(2,)])


@SHARED_FIXTURE
@given(result_sets())
def test_kwargs_and_args_rows_equal_the_drivers_dicts_and_tuples(impl, result):
    colnames, rows = result
    assert impl.kwargs_row(dict)(colnames, rows) == query.dict_factory(colnames, rows)
    assert [list(d) for d in impl.kwargs_row(dict)(colnames, rows)] == [list(d) for d in query.dict_factory(colnames, rows)]
    assert impl.args_row(lambda *values: values)(colnames, rows) == [tuple(r) for r in rows]


def test_failures_leak_no_reference(impl):
    value = "".join(["v", "1"])
    rows = [(1, value)] * 20 + [(2, None)]  # the last row's __post_init__ raises (None.upper())
    before = sys.getrefcount(value)
    for _ in range(100):
        with pytest.raises(AttributeError):
            impl.class_row(PostInit)(["id", "name"], rows)
        with pytest.raises(pyfactories.ColumnMismatch):
            impl.class_row(User)(["id", "nope"], rows)
        with pytest.raises(ValueError):
            impl.kwargs_row(User)(["id", "name"], [(1, value), (1,)])
        built = impl.kwargs_row(User)(["id", "name"], rows)
        del built
    assert sys.getrefcount(value) == before


def test_a_slot_replaced_after_the_check_is_not_filled(impl):
    @dataclasses.dataclass(slots=True)
    class Swapped:
        id: int
        name: str

    factory = impl.class_row(Swapped)
    assert factory(["id", "name"], [(1, "a")]) == [Swapped(1, "a")]
    Swapped.name = property(lambda self: "fixed", lambda self, value: None)
    assert [r.name for r in factory(["id", "name"], [(1, "a")])] == ["fixed"]
    assert factory._fills_slots(["id", "name"]) is False


def test_rows_changed_by_a_constructor_are_checked_again(impl):
    rows = [(1, "a"), (2, "b"), (3, "c")]

    def shrink_the_next_row(*values):
        rows[values[0]] = (0,)
        return values

    with pytest.raises(ValueError) as info:
        impl.args_row(shrink_the_next_row)(["id", "name"], rows)
    assert str(info.value) == "row 1 has 1 values but there are 2 columns"

    def drop_the_rest(*values):
        del rows[1:]
        return values

    rows[:] = [(1, "a"), (2, "b")]
    with pytest.raises(IndexError):
        impl.args_row(drop_the_rest)(["id", "name"], rows)
