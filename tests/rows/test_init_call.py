"""The compiled rows' init call: object.__new__ then the class's Python __init__, as calling the class does."""

from __future__ import annotations

import abc
import dataclasses

import attrs
import pytest

from pyfactories.rows import _rows

from .test_class_rows import AttrsUser, PlainUser, PostInit, StructUser, TupleUser, User


def test_classes_with_a_python_init_are_built_through_it():
    for cls in (User, PostInit, AttrsUser, PlainUser):
        assert _rows.class_row(cls)._calls_init() is cls.__init__
    for cls in (StructUser, TupleUser, dict):  # a metaclass, a __new__, a C __init__: the class is called
        assert _rows.args_row(cls)._calls_init() is None
    assert _rows.args_row(len)._calls_init() is None
    from pyfactories.rows import _rows_py

    assert _rows_py.class_row(User)._calls_init() is None


def test_init_must_return_none(impl):
    class Returns:
        def __init__(self, a):
            self.a = a
            return a

    with pytest.raises(TypeError) as raised:
        Returns(1)
    with pytest.raises(TypeError) as info:
        impl.class_row(Returns)(["a"], [(1,)])
    assert str(info.value) == str(raised.value) == "__init__() should return None, not 'int'"
    assert impl.args_row(Returns)(["a"], [(None,)])[0].a is None


def test_an_init_replaced_later_is_the_one_called(impl):
    @dataclasses.dataclass
    class Base:
        id: int

    class Child(Base):
        pass

    factory = impl.class_row(Child)
    assert factory(["id"], [(1,)])[0].id == 1

    def doubled(self, id):
        self.id = id * 2

    Base.__init__ = doubled  # on the base: the subclass sees it through its MRO
    assert factory(["id"], [(1,)])[0].id == 2
    Child.__init__ = lambda self, id: setattr(self, "id", -id)
    assert factory(["id"], [(1,)])[0].id == -1
    Child.__new__ = lambda cls, *args, **kwargs: "made by __new__"
    assert factory(["id"], [(1,)]) == ["made by __new__"]


def test_an_init_that_changes_the_class_affects_the_next_rows(impl):
    class Shifting:
        def __init__(self, a):
            self.a = a
            Shifting.__init__ = lambda self, a: setattr(self, "a", a + 100)

    assert [r.a for r in impl.args_row(Shifting)(["a"], [(1,), (2,), (3,)])] == [1, 102, 103]


def test_metaclass_call_and_abstract_classes_behave_as_called(impl):
    class Counting(type):
        calls = 0

        def __call__(cls, *args, **kwargs):
            Counting.calls += 1
            return super().__call__(*args, **kwargs)

    class Counted(metaclass=Counting):
        def __init__(self, a):
            self.a = a

    assert impl.class_row(Counted)(["a"], [(1,), (2,)])[1].a == 2 and Counting.calls == 2

    class Abstract(abc.ABC):
        @abc.abstractmethod
        def f(self): ...

        def __init__(self, a):
            self.a = a

    class Marked:
        def __init__(self, a):
            self.a = a

    Marked.__abstractmethods__ = frozenset({"f"})
    for cls in (Abstract, Marked):
        with pytest.raises(TypeError, match="Can't instantiate abstract class"):
            impl.class_row(cls)(["a"], [(1,)])


def test_attrs_validators_and_converters_run(impl):
    @attrs.define
    class Converted:
        n: int = attrs.field(converter=int, validator=attrs.validators.ge(0))

    assert impl.class_row(Converted)(["n"], [("5",)]) == [Converted(5)]
    with pytest.raises(ValueError, match="'n' must be >= 0"):
        impl.class_row(Converted)(["n"], [("-1",)])


def test_keyword_names_are_the_callees_own_objects():
    """Keywords are matched by identity before equality: the plan passes the very str objects the callee holds."""
    import msgspec

    from pyfactories.rows._typed_fields import class_spec
    from pyfactories.rows._typed_py import class_plan

    import sys

    names = ["".join([c, "x"]) for c in "abc"]  # built at run time: not interned...
    for name in names:
        sys.intern("".join(name))  # ...while equal strings are (another class's parameter names, say)
    struct = msgspec.defstruct("Dynamic", names)
    plan = class_plan(struct, class_spec(struct), "error", tuple(names))
    assert all(a is b for a, b in zip(plan.kwnames, struct.__struct_fields__))
    made = dataclasses.make_dataclass("Dynamic", names)
    plan = class_plan(made, class_spec(made), "error", tuple(names))
    assert all(a is b for a, b in zip(plan.kwnames, made.__init__.__code__.co_varnames[1:]))
