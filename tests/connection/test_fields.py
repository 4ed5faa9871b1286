"""A connection's most read attributes as fields (``pyfactories.connection._fields``, id ``c``, and its twin
``pyfactories.connection._fields_py``, ``py``): they start as the driver's, and whatever a subclass puts in
front of one (a property, a class attribute, its own attribute lookup), even after the class was first
used, is what sending reads (borrowing: ``tests/futures/test_borrow.py``)."""

from __future__ import annotations

import importlib

import pytest
from cassandra.connection import Connection, ConnectionShutdown
from cassandra.protocol import OptionsMessage

from pyfactories import connection as ours
from pyfactories.connection._fields_py import FIELDS

IMPLS = {"c": ("_fields", "_encoding"), "py": ("_fields_py", "_encoding_py")}


@pytest.fixture(params=sorted(IMPLS), ids=sorted(IMPLS))
def impl(request):
    fields, encoding = IMPLS[request.param]
    return (importlib.import_module(f"pyfactories.connection.{fields}").ConnectionFields,
            importlib.import_module(f"pyfactories.connection.{encoding}"))


class Sending(Connection):
    def __init__(self):
        super().__init__("127.0.0.1", protocol_version=4)
        self.pushed = []

    def push(self, data):
        self.pushed.append(data)


def test_fields_start_as_the_drivers_class_attributes(impl):
    fields_class = impl[0]
    made_class = type("Made", (fields_class, Connection), {})
    made = made_class.__new__(made_class)
    assert {n: getattr(made, n) for n in FIELDS} == {n: getattr(Connection, n, None) for n in FIELDS}
    conn = type("Conn", (fields_class, Sending), {})()
    driver = Sending()
    def seen(c):  # (each connection its own lock: compared by type)
        return {n: type(v) if n == "lock" else v for n, v in ((n, getattr(c, n)) for n in FIELDS)}

    assert seen(conn) == seen(driver)
    assert not any(n in vars(conn) for n in FIELDS)  # fields, not entries of its dict


def test_our_connections_keep_their_attributes_in_fields():
    for cls in (ours.TimerQueueLibevConnection, ours.TimerQueueAsyncioConnection):
        assert cls.__mro__[1] is ours.ConnectionFields
        assert all(type(ours.ConnectionFields.__dict__[n]).__name__ in ("member_descriptor", "getset_descriptor")
                   for n in FIELDS)


def _send(encoding, conn):
    try:
        return ("ok", encoding.send_msg(conn, OptionsMessage(), 1, None))
    except Exception as exc:
        return ("error", type(exc).__name__)


def test_a_property_in_front_of_a_field_is_read_even_after_the_class_was_used(impl):
    fields_class, encoding = impl
    cls = type("Conn", (fields_class, Sending), {"send_msg": encoding.send_msg})
    conn = cls()
    assert _send(encoding, conn)[0] == "ok" and len(conn.pushed) == 1  # the class found plain (and remembered)
    reads = []
    cls.is_defunct = property(lambda self: reads.append("is_defunct") or True)
    assert _send(encoding, conn) == ("error", ConnectionShutdown.__name__) and reads == ["is_defunct"]
    del cls.is_defunct
    assert _send(encoding, conn)[0] == "ok" and len(conn.pushed) == 2
    # a class attribute in front of the field: what __init__ sets goes to the object's dict, not to the field
    # (which keeps its None, which would make the send busy)
    made = type("Sub", (cls,), {"_socket_writable": False})()
    assert vars(made)["_socket_writable"] is True and _send(encoding, made)[0] == "ok" and made.pushed


def test_an_attribute_lookup_of_its_own_is_asked(impl):
    fields_class, encoding = impl
    asked = []

    def lookup(self, name):
        if name == "is_closed":
            asked.append(name)
            return True
        return object.__getattribute__(self, name)

    conn = type("Conn", (fields_class, Sending), {"__getattribute__": lookup})()
    assert _send(encoding, conn) == ("error", ConnectionShutdown.__name__) and asked == ["is_closed"]
