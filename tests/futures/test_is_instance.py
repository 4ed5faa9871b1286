"""``is_instance``, as the compiled futures and dispatch ask ``isinstance`` of an answer (``c``) and its
twin (``py``): the same answer and the same error as ``isinstance`` for every object and class, down to
the recursion limit, whatever the classes' metaclasses check or the objects say their class is."""

from __future__ import annotations

import sys

import pytest
from cassandra.protocol import ErrorMessage, ProtocolException, ResultMessage
from hypothesis import given, settings
from hypothesis import strategies as st


class Sub(ResultMessage):
    pass


class ClaimsResult:
    @property
    def __class__(self):
        return ResultMessage


class ClaimsNothing:
    @property
    def __class__(self):
        return 42


class ReadsItsOwnWay:
    def __getattribute__(self, name):
        if name == "__class__":
            return ProtocolException
        return object.__getattribute__(self, name)


class Checks(type):
    def __instancecheck__(cls, instance):
        return getattr(instance, "stream_id", None) == 7


Checked = Checks("Checked", (), {})


class Plain:
    pass


def _objects():
    sub = Sub(1)
    sub.stream_id = 7
    return [ResultMessage(1), sub, ProtocolException(0, "bad frame", None), ErrorMessage(0, "no", None), ClaimsResult(),
            ClaimsNothing(), ReadsItsOwnWay(), Plain(), object(), 1, "s", None, ResultMessage]


CLASSES = [ResultMessage, Sub, ProtocolException, ErrorMessage, Checked, Plain, object, int, type,
           (int, ResultMessage), type(ResultMessage)]


def _answer(fn, obj, cls):
    try:
        return fn(obj, cls)
    except Exception as exc:  # noqa: BLE001 - the error is part of the answer
        return type(exc).__name__, str(exc)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(_objects()) - 1), st.integers(0, len(CLASSES) - 1))
def test_the_answer_of_isinstance(spec, obj_at, cls_at):
    obj, cls = _objects()[obj_at], CLASSES[cls_at]
    assert _answer(spec.is_instance, obj, cls) == _answer(isinstance, obj, cls)


def test_not_a_class_is_the_error_of_isinstance(spec):
    assert _answer(spec.is_instance, ResultMessage(1), "ResultMessage") == _answer(isinstance, ResultMessage(1),
                                                                                   "ResultMessage")


def _at_the_limit(fn, obj, cls):
    """``fn(obj, cls)`` called as deep as the recursion limit lets a Python function go."""
    def deeper():
        try:
            return deeper()
        except RecursionError:
            try:
                return "answered", fn(obj, cls)
            except RecursionError as exc:
                return "RecursionError", str(exc)
    return deeper()


@pytest.mark.parametrize("obj", [Sub(1), Plain(), ResultMessage(1)], ids=["subclass", "other", "exact"])
def test_at_the_recursion_limit_it_raises_where_isinstance_raises(obj):
    """Where ``isinstance`` calls the metaclass's check (not for an exact match), it does so inside
    recursion guards, and at the limit raises: so does the compiled ``is_instance``. (Called from Python,
    the builtin ``isinstance`` takes one guard more for its own call than the compiled function does, which
    the futures call from C as ``isinstance`` is called there: the messages say which guard was hit. The
    twin is a Python function calling ``isinstance``: its own frame is one call deeper, so it is not asked
    here.)"""
    from pyfactories.futures import _futures

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)
    try:
        ours = _at_the_limit(_futures.is_instance, obj, ResultMessage)
        python = _at_the_limit(isinstance, obj, ResultMessage)
    finally:
        sys.setrecursionlimit(limit)
    assert ours[0] == python[0]  # (CPython 3.12 and later count these guards apart from Python's calls)
    if python[0] == "answered":
        assert ours == python
    else:
        assert ours[1].startswith("maximum recursion depth exceeded")
