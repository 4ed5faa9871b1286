"""The direct slot fill of class_row: when it applies, and that its rows are the constructor's rows."""

from __future__ import annotations

import copy
import dataclasses
import gc
import pickle
import sys
import weakref

import attrs
import pytest

from pyfactories.rows import _rows

COLS = ["id", "name", "tags"]


FIELDS = [("id", int), ("name", str), ("tags", "list | None", dataclasses.field(default=None))]


def variant(name, namespace=None, **params):
    """A slotted dataclass with the fields of COLS (``namespace``: methods), importable from this module."""
    return dataclasses.make_dataclass(name, FIELDS, namespace={"__module__": __name__, **(namespace or {})},
                                      slots=True, **params)


def _own_init(self, id, name, tags=None):
    self.id, self.name, self.tags = id, name.upper(), tags


Slotted = variant("Slotted")
Hashable = variant("Hashable", kw_only=True, unsafe_hash=True, order=True, weakref_slot=True)
Frozen = variant("Frozen", frozen=True)
PostInit = variant("PostInit", {"__post_init__": lambda self: object.__setattr__(self, "name", self.name.title())})
OwnSetattr = variant("OwnSetattr", {"__setattr__": lambda self, k, v: object.__setattr__(
    self, k, v * 2 if k == "id" else v)})
OwnNew = variant("OwnNew", {"__new__": lambda cls, *args, **kwargs: object.__new__(cls)})
OwnInit = variant("OwnInit", {"__init__": _own_init})


class Meta(type):
    pass


WithMeta = dataclasses.dataclass(slots=True)(Meta("WithMeta", (), {
    "__module__": __name__, "__annotations__": {"id": int, "name": str, "tags": list}, "tags": None}))
AttrsSlotted = attrs.make_class("AttrsSlotted", {"id": attrs.field(), "name": attrs.field(),
                                                 "tags": attrs.field(default=None)}, slots=True)


@dataclasses.dataclass(slots=True)
class Factory:
    id: int
    name: str
    tags: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass(slots=True)
class NoInitField:
    id: int
    name: str
    tags: list | None = None
    seen: int = dataclasses.field(default=0, init=False)


@dataclasses.dataclass(slots=True)
class BaseFields:
    id: int


@dataclasses.dataclass(slots=True)
class Inherited(BaseFields):
    name: str
    tags: list | None = None


def test_a_plain_slotted_dataclass_is_filled_directly():
    for cls in (Slotted, Hashable):
        assert _rows.class_row(cls)._fills_slots(COLS) is True
        assert _rows.class_row(cls)._fills_slots(["tags", "name", "id"]) is True  # any column order


@pytest.mark.parametrize("cls", [Frozen, PostInit, Factory, NoInitField, Inherited, OwnSetattr, OwnNew, WithMeta,
                                 OwnInit, AttrsSlotted])
def test_anything_else_takes_the_constructor(cls):
    factory = _rows.class_row(cls)
    assert factory._fills_slots(COLS) is False
    rows = factory(COLS, [(1, "ann", None)])
    assert rows == [cls(id=1, name="ann", tags=None)]


def test_a_missing_column_takes_the_constructor_and_its_default():
    factory = _rows.class_row(Slotted)
    assert factory._fills_slots(["id", "name"]) is False
    assert factory(["id", "name"], [(1, "a")]) == [Slotted(1, "a")]
    assert _rows.class_row(Slotted, extra="ignore")._fills_slots(["id", "name", "tags", "x"]) is True


def test_the_python_twin_never_fills():
    from pyfactories.rows import _rows_py

    assert _rows_py.class_row(Slotted)._fills_slots(COLS) is False


def _both(cls, rows, cols=COLS):
    filled = _rows.class_row(cls)(cols, rows)
    built = [cls(**dict(zip(cols, row))) for row in rows]
    return filled, built


@pytest.mark.parametrize("cls", [Slotted, Hashable])
def test_filled_rows_are_indistinguishable_from_constructed_ones(cls):
    values = [(1, "ann", [1, 2] if cls is Slotted else (1, 2)), (2, "bob", None)]
    filled, built = _both(cls, values)
    for mine, theirs in zip(filled, built):
        assert type(mine) is cls and mine == theirs and repr(mine) == repr(theirs)
        for f in dataclasses.fields(cls):
            assert getattr(mine, f.name) is getattr(theirs, f.name)
        assert not hasattr(mine, "__dict__")
        assert gc.is_tracked(mine) == gc.is_tracked(theirs) is True
        assert sys.getsizeof(mine) == sys.getsizeof(theirs)
        assert pickle.loads(pickle.dumps(mine)) == theirs
        assert copy.copy(mine) == theirs and copy.deepcopy(mine) == theirs
        assert dataclasses.asdict(mine) == dataclasses.asdict(theirs)
        assert dataclasses.replace(mine, name="x") == dataclasses.replace(theirs, name="x")
        assert [id(x) for x in gc.get_referents(mine)] == [id(x) for x in gc.get_referents(theirs)]
    if cls is Hashable:
        assert [hash(r) for r in filled] == [hash(r) for r in built]
        assert sorted(filled) == sorted(built)
        assert weakref.ref(filled[0])() is filled[0]
    mine = filled[0]
    mine.name = "changed"  # an ordinary, mutable instance
    assert mine.name == "changed"


def test_no_reference_is_leaked_or_lost():
    factory = _rows.class_row(Slotted)
    name, tags = "".join(["n", "a", "m", "e"]), [1]
    rows = [(10**20, name, tags)] * 50
    before = sys.getrefcount(name), sys.getrefcount(tags), sys.getrefcount(Slotted)
    for _ in range(200):
        built = factory(COLS, rows)
    assert sys.getrefcount(name) == before[0] + 50 and sys.getrefcount(Slotted) == before[2] + 50
    del built
    assert (sys.getrefcount(name), sys.getrefcount(tags), sys.getrefcount(Slotted)) == before


def test_a_class_changed_after_the_check_takes_the_constructor():
    Changing = variant("Changing")
    factory = _rows.class_row(Changing)
    assert factory._fills_slots(COLS) is True
    generated = Changing.__init__
    calls = []

    def counting_init(self, *args, **kwargs):
        calls.append(kwargs)
        generated(self, *args, **kwargs)

    Changing.__init__ = counting_init
    assert factory(COLS, [(1, "a", None)]) == [Changing(1, "a")]
    assert len(calls) == 2 and factory._fills_slots(COLS) is False

    # restored: checked again, and filled again
    Changing.__init__ = generated
    assert factory._fills_slots(["id", "name", "tags"]) is False  # this plan gave the fill up for good
    factory.cache_clear()
    assert factory._fills_slots(COLS) is True


def test_a_replaced_init_code_takes_the_constructor():
    Recoded = variant("Recoded")
    factory = _rows.class_row(Recoded)
    assert factory._fills_slots(COLS) is True

    Recoded.__init__.__code__ = _own_init.__code__
    assert factory(COLS, [(1, "a", None)]) == [Recoded(1, "A")]
    assert factory._fills_slots(COLS) is False


def test_a_setattr_added_later_takes_the_constructor():
    Later = variant("Later")
    factory = _rows.class_row(Later)
    assert factory._fills_slots(COLS) is True
    Later.__setattr__ = lambda self, k, v: object.__setattr__(self, k, v * 2 if k == "id" else v)
    assert factory(COLS, [(2, "a", None)])[0].id == 4
