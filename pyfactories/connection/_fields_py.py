"""The attributes of the driver's ``Connection`` that every request reads or writes, as slots.

``ConnectionFields`` is the first base of pyfactories' connection classes
(``pyfactories.connection.TimerQueueLibevConnection`` and ``TimerQueueAsyncioConnection``). Each name of
:data:`FIELDS` is a slot of the object instead of an entry of its ``__dict__``, starting as the driver's
class attribute (None where the driver has none: an attribute its ``Connection.__init__`` always sets).
The compiled twin (``pyfactories.connection._fields``) keeps them as C fields, which the compiled
connection (sending, dispatching answers), the pool steps (borrowing and giving back a stream) read and
write without an attribute lookup, as long as a connection's class leaves them as they are: a subclass
that puts a property, a class attribute or its own ``__getattribute__``/``__setattr__`` in front of one
of them has its attributes asked as Python asks them, everywhere.
"""

from __future__ import annotations

from typing import Any

from cassandra.connection import Connection

#: the fields, in the order of the compiled class's layout (``ext/connection/connection_fields.h``)
FIELDS = (
    "is_defunct", "is_closed", "_socket_writable", "_requests", "protocol_version", "compressor", "decompressor",
    "allow_beta_protocol_version", "_is_checksumming_enabled", "lock", "in_flight", "max_request_id", "request_ids",
    "highest_request_id", "orphaned_request_ids", "orphaned_threshold_reached", "_continuous_paging_sessions",
    "msg_received", "user_type_map",
)


class ConnectionFields:
    """The first base of a pyfactories connection: each name of :data:`FIELDS` a slot of the object."""

    __slots__ = FIELDS

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        connection = super().__new__(cls)
        for name, value in _FIELD_DEFAULTS:  # in the slot, not through the class (a property there has no setter)
            _SLOTS[name].__set__(connection, value)
        return connection


#: each field's value before it is set: the driver's class attribute as imported, None where it has none
_FIELD_DEFAULTS = tuple((name, getattr(Connection, name, None)) for name in FIELDS)
_SLOTS = {name: ConnectionFields.__dict__[name] for name in FIELDS}
