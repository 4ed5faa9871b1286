"""The message the fast path's ``decode_message`` makes for a plain VOID or ROWS result is made as
``message_cls.__new__(message_cls)`` makes it: the handler's own class (the driver's ``ResultMessage``
underneath) through object's slot, and a class with a ``__new__`` of its own, or whose metaclass puts one
in front or reads attributes its own way, through what that lookup finds."""

from __future__ import annotations

import pytest
from cassandra import cqltypes
from cassandra.protocol import ProtocolHandler, ResultMessage

from pyfactories import _driver, decoding
from pyfactories.decoding import _fastpath

from ..result_bodies import rows_body

RESULT = 0x08
VOID = b"\x00\x00\x00\x01"
ROWS = rows_body([("k", cqltypes.Int32Type)], [[1], [2]], metadata=True)
NEWS = []  # the classes whose own __new__ ran


def decode(handler, body):
    return _driver.decode_message(handler, 5, {}, 3, 0, RESULT, body, None, None)


def seen(msg):
    return (type(msg).__name__, msg.kind, msg.stream_id, msg.trace_id, msg.custom_payload, msg.warnings,
            getattr(msg, "parsed_rows", None))


@pytest.mark.parametrize("body", [VOID, ROWS], ids=["void", "rows"])
def test_the_handlers_messages_are_the_drivers(body):
    handler = decoding.handler("tuple")
    ours, drivers = decode(handler, body), decode(ProtocolHandler, body)
    assert isinstance(ours, ResultMessage)
    assert seen(ours)[1:] == seen(drivers)[1:]


class OwnNew(ResultMessage):
    def __new__(cls, *args):
        NEWS.append(cls.__name__)
        return super().__new__(cls)


class MetaNew(type(ResultMessage)):
    """A metaclass whose ``__new__`` is a data descriptor: ``cls.__new__`` finds it before the class's."""

    class _Found:
        def __get__(self, obj, owner=None):
            def new(cls):
                NEWS.append(f"meta:{cls.__name__}")
                return object.__new__(cls)
            return new

        def __set__(self, obj, value):
            raise AttributeError("read only")

    __new__ = _Found()


class MetaReads(type(ResultMessage)):
    """A metaclass that reads its classes' attributes its own way."""

    def __getattribute__(cls, name):
        if name == "__new__":
            def new(c):
                NEWS.append(f"reads:{c.__name__}")
                return object.__new__(c)
            return new
        return super().__getattribute__(name)


class BuiltinsNew(ResultMessage):
    """A class that keeps object's slot but finds a builtin type's ``__new__``: calling it raises."""

    __new__ = int.__new__


@pytest.mark.parametrize("body", [VOID, ROWS], ids=["void", "rows"])
def test_a_class_that_finds_a_builtins_new_raises_as_python(body):
    with pytest.raises(TypeError) as python:
        BuiltinsNew.__new__(BuiltinsNew)
    handler = type("Handler", (ProtocolHandler,), {
        "decode_message": _fastpath.make_decode_message(_decoder(), ProtocolHandler.decode_message.__func__,
                                                        BuiltinsNew, _driver.takes_protocol_features())})
    with pytest.raises(TypeError) as ours:
        decode(handler, body)
    assert str(ours.value) == str(python.value)


@pytest.mark.parametrize("body", [VOID, ROWS], ids=["void", "rows"])
@pytest.mark.parametrize("made", ["own __new__", "metaclass __new__", "metaclass reads"])
def test_a_class_whose_new_is_not_objects_makes_its_message(made, body):
    if made == "own __new__":
        message_cls, expected = OwnNew, "OwnNew"
    else:
        meta = MetaNew if made == "metaclass __new__" else MetaReads
        message_cls = type.__new__(meta, "Odd", (ResultMessage,), {})
        expected = ("meta:" if meta is MetaNew else "reads:") + "Odd"
        assert message_cls.__new__(message_cls) is not None and NEWS.pop() == expected  # as Python finds it
    handler = type("Handler", (ProtocolHandler,), {
        "decode_message": _fastpath.make_decode_message(_decoder(), ProtocolHandler.decode_message.__func__,
                                                        message_cls, _driver.takes_protocol_features())})
    del NEWS[:]
    msg = decode(handler, body)
    assert NEWS == [expected] and type(msg) is message_cls
    assert seen(msg)[1:] == seen(decode(ProtocolHandler, body))[1:]


def _decoder():
    """The decoder of the fast path's tuple handler (its message class keeps it)."""
    handler = decoding.handler("tuple")
    return handler.message_types_by_opcode[ResultMessage.opcode].decoder


@pytest.mark.parametrize("body", [VOID, ROWS], ids=["void", "rows"])
@pytest.mark.parametrize("change", ["class", "base", "metaclass", "__class__"])
def test_a_class_changed_after_its_first_message_makes_the_next_as_python_finds_it(change, body):
    """What ``__new__`` finds is recorded for the class last asked, and found again once it or its bases or
    metaclass changed, or the class was given another metaclass: each message as ``message_cls.__new__``."""
    meta = type("Meta", (type(ResultMessage),), {})
    base = meta("Base", (ResultMessage,), {})
    message_cls = meta("Changing", (base,), {})
    other = meta("Other", (ResultMessage,), {})
    handlers = [type("Handler", (ProtocolHandler,), {
        "decode_message": _fastpath.make_decode_message(_decoder(), ProtocolHandler.decode_message.__func__,
                                                        cls, _driver.takes_protocol_features())})
        for cls in (message_cls, other)]
    del NEWS[:]
    for handler in handlers[::-1] * 2:  # two classes in turn (the record replaced each time), this one last
        assert type(decode(handler, body)).__name__ in ("Changing", "Other")
    assert NEWS == []

    def new(cls, *args):
        NEWS.append(f"{change}:{cls.__name__}")
        return object.__new__(cls)

    if change == "class":
        message_cls.__new__ = new
    elif change == "base":
        base.__new__ = new
    elif change == "metaclass":
        meta.__new__ = property(lambda cls: lambda c: new(c))
    else:
        message_cls.__class__ = MetaNew  # (reads attributes as type does: only its __new__ is in front)
        change = "meta"
    for _ in range(2):
        msg = decode(handlers[0], body)
        assert NEWS == [f"{change}:Changing"] and type(msg) is message_cls
        del NEWS[:]
        assert seen(msg)[1:] == seen(decode(ProtocolHandler, body))[1:]
