"""bind: a ``uuid.UUID`` whose ``int`` slot was set to something else gets the driver's error (a TypeError for
the column, an OverflowError for an int out of range), not an AttributeError of the fast path."""

import uuid

from cassandra.cqltypes import UUIDType
from cassandra.protocol import ColumnMetadata
from cassandra.query import BoundStatement, PreparedStatement

from pyfactories.binding import _binding
from pyfactories.binding import _binding_py


def outcome(bind, value):
    statement = PreparedStatement([ColumnMetadata("ks", "t", "c0", UUIDType)], b"id", [0], "INSERT ...", "ks", 5,
                                  None, None)
    try:
        return "bound", bind(statement, [value]).values
    except Exception as exc:
        return "error", type(exc), str(exc)


for number in ("nope", 1 << 128, -1, 2.5, (1 << 128) - 1, 0):
    value = uuid.uuid4()
    object.__setattr__(value, "int", number)
    driver = outcome(lambda s, v: BoundStatement(s).bind(v), value)
    assert outcome(_binding.bind, value) == driver, (number, driver)
    assert outcome(_binding_py.bind, value) == driver, (number, driver)
print("ok")
