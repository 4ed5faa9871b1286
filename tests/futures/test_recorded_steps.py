"""What the compiled futures check before a step they take in C instead of a driver's method: a record
of what ``(cls, name)`` pairs found, against what they find now (``finds_as_recorded``), compiled (``c``:
it also keeps the classes' version tags, and looks nothing up while none changed) and pure Python
(``py``)."""

from __future__ import annotations

import importlib

import pytest

MODULES = {"c": "pyfactories.futures._futures", "py": "pyfactories.futures._futures_py"}


@pytest.fixture(params=sorted(MODULES), ids=sorted(MODULES))
def spec(request):
    return importlib.import_module(MODULES[request.param])


def classes():
    class Base:
        def step(self):
            return "base"

    class Leaf(Base):
        pass

    return Base, Leaf


def test_a_change_to_a_class_or_its_base_is_seen_and_undone(spec):
    base, leaf = classes()
    recorded = spec.recorded_steps(((leaf, "step"), (base, "missing")))
    original = base.__dict__["step"]
    for _ in range(3):  # (the compiled record keeps the tags after the first full check)
        assert spec.finds_as_recorded(recorded)
    base.step = lambda self: "replaced"
    assert not spec.finds_as_recorded(recorded) and not spec.finds_as_recorded(recorded)
    base.step = original
    assert spec.finds_as_recorded(recorded)
    base.missing = None
    assert not spec.finds_as_recorded(recorded)
    del base.missing
    assert spec.finds_as_recorded(recorded)
    leaf.step = lambda self: "the leaf's own"
    assert not spec.finds_as_recorded(recorded)
    leaf.step = original  # what it finds is what it found, wherever it is found
    assert spec.finds_as_recorded(recorded)


def test_a_stand_in_for_a_class_is_never_as_recorded(spec):
    base, _ = classes()

    class Lying:
        @property
        def __class__(self):
            return type

    recorded = spec.recorded_steps(((base, "step"),))
    stand_in = (recorded[0], (Lying(), "step", base.__dict__["step"])) if spec.__name__ == MODULES["c"] else (
        (Lying(), "step", base.__dict__["step"]),)
    assert not spec.finds_as_recorded(stand_in)


def test_the_kept_tags_are_out_of_reach_and_never_lend_one_record_another_records_answer():
    """The compiled record's tags are a capsule: Python code can neither read nor write them, and a record
    put together from another one's tags and other steps is looked up in full."""
    compiled = importlib.import_module(MODULES["c"])
    base, leaf = classes()
    old = compiled.recorded_steps(((base, "step"),))
    original = base.__dict__["step"]
    assert compiled.finds_as_recorded(old)
    with pytest.raises(TypeError):
        memoryview(old[0])
    base.step = lambda self: "replaced"
    new = compiled.recorded_steps(((base, "step"),))
    assert compiled.finds_as_recorded(new) and not compiled.finds_as_recorded(old)
    assert not compiled.finds_as_recorded((new[0],) + old[1:])  # the new record's tags, the old steps
    assert compiled.finds_as_recorded((old[0],) + new[1:])  # (true: found in full)
    base.step = original
    assert compiled.finds_as_recorded(old) and not compiled.finds_as_recorded((old[0],) + new[1:])
    assert not compiled.finds_as_recorded((object(),) + new[1:]) and compiled.finds_as_recorded((None,) + old[1:])


@pytest.mark.parametrize("stand_in_first", [True, False])
def test_a_step_that_is_not_a_class_is_never_as_recorded(spec, stand_in_first):
    """A stand-in in a class's place (a mock) found false from the first check on, kept tags or not."""
    base, _ = classes()

    class StandIn:
        step = base.__dict__["step"]

    pairs = ((StandIn(), "step"), (base, "step")) if stand_in_first else ((base, "step"), (StandIn(), "step"))
    recorded = spec.recorded_steps(pairs)
    for _ in range(3):
        assert not spec.finds_as_recorded(recorded)


@pytest.mark.parametrize("record", [(), (None, "not a step"), (None, (int,)), (None, (int, "x", 1, 2)),
                                    (None, [int, "x"]), ((int, "real", int.__dict__["real"]),)])
def test_a_record_of_another_shape_is_refused(record):
    compiled = importlib.import_module(MODULES["c"])
    with pytest.raises((TypeError, ValueError)):
        compiled.finds_as_recorded(record)


@pytest.mark.parametrize("names", [((int, None),), ((int, b"real"),), ((int,),), (int,)])
def test_steps_to_record_are_a_class_and_a_name(spec, names):
    with pytest.raises(TypeError):
        spec.recorded_steps(names)


def test_many_steps_are_checked_each_time(spec):
    made = [type(f"C{i}", (), {"x": i}) for i in range(20)]
    recorded = spec.recorded_steps(tuple((cls, "x") for cls in made))
    assert spec.finds_as_recorded(recorded) and spec.finds_as_recorded(recorded)
    made[19].x = "changed"
    assert not spec.finds_as_recorded(recorded)
