"""What the compiled futures check before a step they take in C instead of a driver's method: a record
of what ``(cls, name)`` pairs found, against what they find now (``finds_as_recorded``), compiled (``c``:
it also keeps the classes' version tags, and looks nothing up while none changed) and pure Python
(``py``); the kept tags are reachable from Python, and whatever is done to them changes no answer."""

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


@pytest.mark.parametrize("tamper", ["garbage", "longer", "shorter", "exported"])
def test_the_kept_tags_changed_from_python_change_no_answer(tamper):
    compiled = importlib.import_module(MODULES["c"])
    base, leaf = classes()
    recorded = compiled.recorded_steps(((leaf, "step"), (base, "other")))
    tags = recorded[0]
    assert type(tags) is bytearray and compiled.finds_as_recorded(recorded)
    held = None
    if tamper == "garbage":
        tags[:] = b"\xff" * len(tags)
    elif tamper == "longer":
        tags.extend(b"\x00" * 64)
    elif tamper == "shorter":
        del tags[1:]
    else:
        held = memoryview(tags)  # (an export: the record is written in place, never resized)
    for _ in range(2):
        assert compiled.finds_as_recorded(recorded)
    base.other = 1
    assert not compiled.finds_as_recorded(recorded)
    del base.other
    assert compiled.finds_as_recorded(recorded)
    if held is not None:
        held.release()


def test_many_steps_are_checked_each_time(spec):
    made = [type(f"C{i}", (), {"x": i}) for i in range(20)]
    recorded = spec.recorded_steps(tuple((cls, "x") for cls in made))
    assert spec.finds_as_recorded(recorded) and spec.finds_as_recorded(recorded)
    made[19].x = "changed"
    assert not spec.finds_as_recorded(recorded)
