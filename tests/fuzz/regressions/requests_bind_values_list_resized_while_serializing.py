"""bind: a column type's serialize that shortens or lengthens the values list leaves the statement as the
driver's bind leaves it (the driver's zip reads the list as it is at each column), not an IndexError or a
value left out."""

from cassandra.cqltypes import Int32Type
from cassandra.protocol import ColumnMetadata
from cassandra.query import BoundStatement, PreparedStatement

from pyfactories.binding import _binding
from pyfactories.binding import _binding_py

values = []


class Shrinking(Int32Type):
    @classmethod
    def serialize(cls, value, protocol_version):
        del values[1:]
        return Int32Type.serialize(value, protocol_version)


class Growing(Int32Type):
    @classmethod
    def serialize(cls, value, protocol_version):
        values.append(7)
        return Int32Type.serialize(value, protocol_version)


def statement(first):
    meta = [ColumnMetadata("ks", "t", "c0", first)] + [ColumnMetadata("ks", "t", f"c{i}", Int32Type) for i in (1, 2)]
    return PreparedStatement(meta, b"id", [0], "INSERT ...", "ks", 5, None, None)


def outcome(bind, first, given):
    values[:] = given
    try:
        bound = bind(statement(first), values)
        return "bound", bound.routing_key, bound.values, list(bound.raw_values)
    except Exception as exc:
        return "error", type(exc), str(exc)


for first, given in ((Shrinking, [1, 2, 3]), (Growing, [1]), (Growing, [1, 2]), (Shrinking, (1, 2, 3))):
    driver = outcome(lambda s, v: BoundStatement(s).bind(v), first, given)
    assert driver[0] == "bound", driver
    assert outcome(_binding.bind, first, given) == driver, (first, given)
    assert outcome(_binding_py.bind, first, given) == driver, (first, given)
print("ok")
