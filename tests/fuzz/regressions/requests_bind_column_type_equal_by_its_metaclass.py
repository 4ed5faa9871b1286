"""bind: a column type whose metaclass says it equals (and hashes as) the driver's Int32Type is not bound as
an int (4 bytes where the driver's bigint serialize gives 8), and a type that cannot be hashed gets the
driver's error: the fast kinds are found by the type's identity."""

from cassandra.cqltypes import Int32Type, LongType
from cassandra.protocol import ColumnMetadata
from cassandra.query import BoundStatement, PreparedStatement

from pyfactories.binding import _binding
from pyfactories.binding import _binding_py


class Meta(type(LongType)):
    def __eq__(cls, other):
        return other is Int32Type or cls is other

    def __hash__(cls):
        return hash(Int32Type)


class Liar(LongType, metaclass=Meta):
    pass


def outcome(bind, col_type):
    statement = PreparedStatement([ColumnMetadata("ks", "t", "c0", col_type)], b"id", [0], "INSERT ...", "ks", 5,
                                  None, None)
    try:
        return "bound", bind(statement, [1]).values
    except Exception as exc:
        return "error", type(exc)


for col_type in (Liar, [1], Int32Type, LongType):
    driver = outcome(lambda s, v: BoundStatement(s).bind(v), col_type)
    assert outcome(_binding.bind, col_type) == driver, (col_type, driver)
    assert outcome(_binding_py.bind, col_type) == driver, (col_type, driver)
assert outcome(_binding.bind, Liar) == ("bound", [(1).to_bytes(8, "big")])
print("ok")
