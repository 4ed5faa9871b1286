"""Typed rows (class_row, kwargs_row, args_row), compiled against the pure-Python twin and the driver.

The constructors here are adversarial: they mutate the rows list and the column list being read (drop,
append or replace rows, with rows of the wrong length or lying subclasses), clear the factory's cache,
call the factory again, or belong to classes whose metaclass ``__call__`` runs code or whose ``__new__``
returns another type. Slotted dataclasses (the direct slot fill) are changed between calls: ``__init__``
replaced, its code replaced, slots swapped or replaced by properties, ``__setattr__`` added. Each input is
built afresh for each implementation; both must give the same rows or raise the same exception type.
"""

import dataclasses
import gc
import sys

from cassandra import query
from hypothesis import given
from hypothesis import strategies as st

from pyfactories.rows import _typed_py
from pyfactories.rows import _rows
from tests.fuzz.conftest import fuzz
from tests.fuzz.test_rows_factories import _cache_size_restored, build, recipes  # noqa: F401 - a fixture
from tests.strategies import values

IMPLS = (_rows, _typed_py)


def outcome(call):
    try:
        return "value", [describe(obj) for obj in call()]
    except (TypeError, ValueError, IndexError, AttributeError, RecursionError) as exc:
        return "raised", type(exc)


def describe(obj):
    if isinstance(obj, tuple):
        return ("tuple", tuple(obj))
    if isinstance(obj, dict):
        return ("dict", list(obj.items()))
    names = getattr(type(obj), "__dataclass_fields__", None)
    if names is not None:
        return (type(obj).__name__, tuple(getattr(obj, n, "<unset>") for n in names))
    return (type(obj).__name__, sorted(getattr(obj, "__dict__", {}).items(), key=repr))


class AnyKeywords:
    def __init__(self, **kw):
        self.kw = kw


def targets(module, kind):
    """A fresh factory of `kind` (and nothing shared with the other implementation's)."""
    if kind == "args":
        return module.args_row(lambda *v: v)
    if kind == "kwargs":
        return module.kwargs_row(dict)
    return module.class_row(type("AnyKeywords", (AnyKeywords,), {}))


# -- lying input, as for the other factories -----------------------------------------------------------


@fuzz
@given(recipe=recipes(), kind=st.sampled_from(["args", "kwargs", "class"]))
def test_rows_typed_factories_match_the_twin_on_lying_input(recipe, kind):
    results = []
    for module in IMPLS:
        colnames, rows, _ = build(recipe)
        results.append(outcome(lambda: targets(module, kind)(colnames, rows)))
    assert results[0] == results[1]
    if kind == "kwargs" and results[0][0] == "value":
        _, rows, plain = build(recipe)
        # the rows present when the call starts: a rows list is snapshotted before its rows are read, so a
        # row that a row's iteration appends is not built (the driver's comprehension would also build it)
        assert results[0][1] == [describe(d) for d in query.dict_factory(plain, [tuple(r) for r in list(rows)])]


# -- constructors that change what is being read --------------------------------------------------------

ACTIONS = ["pop_row", "append_row", "append_bad_row", "replace_next_short", "replace_next_lying", "clear_rows",
           "grow_colnames", "clear_cache", "recurse", "nothing"]


def make_actions(shared, drawn):
    """The per-call actions a constructor runs (call number -> action), on the rows of this run."""

    def act(name):
        rows, colnames, factory = shared["rows"], shared["colnames"], shared["factory"]
        if name == "pop_row" and rows:
            rows.pop()
        elif name == "append_row":
            rows.append(tuple(range(len(colnames))))
        elif name == "append_bad_row":
            rows.append(5)
        elif name == "replace_next_short" and shared["calls"] < len(rows):
            rows[shared["calls"]] = ()
        elif name == "replace_next_lying" and shared["calls"] < len(rows):
            rows[shared["calls"]] = Fewer(range(len(shared["plain"])))
        elif name == "clear_rows":
            rows.clear()
        elif name == "grow_colnames":
            colnames.append("zz")
        elif name == "clear_cache":
            factory.cache_clear()
        elif name == "recurse" and shared["depth"] == 0:
            shared["depth"] += 1
            try:
                factory(list(shared["plain"]), [tuple(range(len(shared["plain"])))])
            finally:
                shared["depth"] -= 1

    def hook():
        if shared["depth"] == 0:
            name = drawn[shared["calls"] % len(drawn)]
            shared["calls"] += 1
            act(name)

    return hook


class Fewer(list):
    """A row that stores its values but yields one fewer."""

    def __iter__(self):
        return iter(list(list.__iter__(self))[:-1])


def constructors(kind, hook):
    """A target of `kind` whose construction runs `hook` first."""
    if kind == "args":
        def build_args(*v):
            hook()
            return v
        return build_args
    if kind == "kwargs":
        def build_kwargs(**kw):
            hook()
            return kw
        return build_kwargs
    if kind == "post_init":
        @dataclasses.dataclass
        class PostInit:
            a: object
            b: object

            def __post_init__(self):
                hook()
        return PostInit
    if kind == "setattr":
        @dataclasses.dataclass
        class SetAttr:
            a: object
            b: object

            def __setattr__(self, name, value):
                hook()
                object.__setattr__(self, name, value)
        return SetAttr
    if kind == "slots_post_init":
        @dataclasses.dataclass(slots=True)
        class SlotsPostInit:
            a: object
            b: object

            def __post_init__(self):
                hook()
        return SlotsPostInit
    if kind == "init":
        class Init:
            def __init__(self, a, b):
                hook()
                self.a, self.b = a, b
        return Init
    if kind == "metaclass_call":
        class Meta(type):
            def __call__(cls, *args, **kw):
                hook()
                return super().__call__(*args, **kw)

        class Made(metaclass=Meta):
            def __init__(self, a, b):
                self.a, self.b = a, b
        return Made
    if kind == "new_other_type":
        class Other:
            def __new__(cls, a, b):
                hook()
                return (a, b)
        return Other
    raise AssertionError(kind)


FACTORY_OF = {"args": "args_row", "kwargs": "kwargs_row", "post_init": "class_row", "init": "class_row",
              "setattr": "class_row", "slots_post_init": "class_row",
              "metaclass_call": "class_row", "new_other_type": "class_row"}


@fuzz
@given(kind=st.sampled_from(sorted(FACTORY_OF)), drawn=st.lists(st.sampled_from(ACTIONS), min_size=1, max_size=4),
       rows=st.lists(st.tuples(values, values), max_size=6), as_tuple=st.booleans())
def test_rows_typed_constructors_that_change_the_rows(kind, drawn, rows, as_tuple):
    results = []
    for module in IMPLS:
        shared = {"calls": 0, "depth": 0, "plain": ("a", "b")}
        shared["colnames"] = ["a", "b"]
        shared["rows"] = [list(r) if i % 2 and not as_tuple else r for i, r in enumerate(rows)]
        target = constructors(kind, make_actions(shared, drawn))
        factory = getattr(module, FACTORY_OF[kind])(target)
        shared["factory"] = factory
        results.append(outcome(lambda: factory(shared["colnames"], shared["rows"])))
    assert results[0] == results[1]


# -- slotted dataclasses changed between calls (the direct slot fill) ------------------------------------

CHANGES = ["none", "wrap_init", "other_init", "init_code", "swap_slots", "property", "setattr", "post_init",
           "new_other", "same_slot_twice", "delete_init"]


def slotted():
    @dataclasses.dataclass(slots=True)
    class Slotted:
        a: object
        b: object
        c: object
    return Slotted


def change(cls, how):
    if how == "wrap_init":
        original = cls.__init__

        def __init__(self, a, b, c):
            original(self, c, b, a)
        cls.__init__ = __init__
    elif how == "other_init":
        @dataclasses.dataclass(slots=True)
        class Other:
            c: object
            b: object
            a: object
        cls.__init__ = Other.__init__
    elif how == "init_code":
        def reversed_init(self, a, b, c):
            self.a, self.b, self.c = c, b, a
        init = cls.__dict__.get("__init__")
        if init is not None and not init.__code__.co_freevars:
            init.__code__ = reversed_init.__code__
    elif how == "swap_slots":
        a, c = cls.__dict__["a"], cls.__dict__["c"]
        cls.a, cls.c = c, a
    elif how == "property":
        cls.b = property(lambda self: "fixed", lambda self, value: None)
    elif how == "setattr":
        def __setattr__(self, name, value):
            object.__setattr__(self, name, ("set", value))
        cls.__setattr__ = __setattr__
    elif how == "post_init":
        cls.__post_init__ = lambda self: None
    elif how == "new_other":
        cls.__new__ = staticmethod(lambda klass, *a, **k: ("new", a, tuple(sorted(k.items()))))
    elif how == "same_slot_twice":
        cls.a = cls.__dict__["b"]
    elif how == "delete_init" and "__init__" in cls.__dict__:
        del cls.__init__


@fuzz
@given(how=st.lists(st.sampled_from(CHANGES), min_size=1, max_size=2),
       rows=st.lists(st.tuples(values, values, values), min_size=1, max_size=5),
       order=st.permutations(["a", "b", "c"]), planned_before=st.booleans())
def test_rows_direct_fill_follows_the_class_after_it_changes(how, rows, order, planned_before, frozen_heap):
    results, held = [], []
    marker = object()  # in every row: a reference stored and never released shows in its count
    rows = [(marker,) + r[1:] for r in rows]
    for module in IMPLS:
        cls = slotted()
        factory = module.class_row(cls)
        reordered = [tuple(r[("a", "b", "c").index(n)] for n in order) for r in rows]
        count = sys.getrefcount(marker)
        before = outcome(lambda: factory(list(order), reordered)) if planned_before else None
        for each in how:
            change(cls, each)
        after = outcome(lambda: factory(list(order), reordered))
        results.append((before, after, factory._fills_slots(list(order)) if module is _rows else None))
        del before, after, reordered
        gc.collect()
        held.append(sys.getrefcount(marker) - count)  # what the descriptions in `results` hold, and any leak
    assert results[0][:2] == results[1][:2]
    assert held[0] == held[1]  # the compiled rows released every reference the twin released
    if planned_before and any(h != "none" for h in how) and results[0][0] != results[0][1]:
        assert results[0][2] is False  # what the constructor builds differently, the direct fill does not build
