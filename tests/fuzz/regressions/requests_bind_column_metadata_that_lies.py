"""bind: column metadata that is a list subclass whose ``len`` lies (the plan's fields came out of different
lengths, and the bind read past the end of its routing flags) is the driver's work."""

from cassandra.cqltypes import Int32Type
from cassandra.protocol import ColumnMetadata
from cassandra.query import UNSET_VALUE, BoundStatement, PreparedStatement

from pyfactories.binding import _binding
from pyfactories.binding import _binding_py


class Lying(list):
    def __len__(self):
        return 1


def outcome(bind, values):
    meta = Lying(ColumnMetadata("ks", "t", f"c{i}", Int32Type) for i in range(300))
    statement = PreparedStatement(meta, b"id", [0], "INSERT ...", "ks", 5, None, None)
    try:
        bound = bind(statement, values)
        return "bound", bound.values, bound.routing_key
    except Exception as exc:
        return "error", type(exc), str(exc)


for values in ([1] + [UNSET_VALUE] * 299, [1], {"c0": 1}):
    driver = outcome(lambda s, v: BoundStatement(s).bind(v), values)
    assert outcome(_binding.bind, values) == driver, driver
    assert outcome(_binding_py.bind, values) == driver, driver
print("ok")
