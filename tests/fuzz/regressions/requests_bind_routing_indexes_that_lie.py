"""bind: routing key indexes that are not plain ints of the columns (an int subclass whose ``__index__``
answers differently each time, a bool, one out of the columns' range, where the driver binds and fails only
when the key is read) are the driver's work: the bind and its routing key are the driver's."""

from cassandra.cqltypes import BytesType
from cassandra.protocol import ColumnMetadata
from cassandra.query import BoundStatement, PreparedStatement

from pyfactories.binding import _binding
from pyfactories.binding import _binding_py


class Lying(int):
    calls = 0

    def __index__(self):
        Lying.calls += 1
        return 0 if Lying.calls <= 2 else 1


def statement(indexes):
    meta = [ColumnMetadata("ks", "t", f"c{i}", BytesType) for i in range(2)]
    return PreparedStatement(meta, b"id", indexes, "INSERT ...", "ks", 5, None, None)


def outcome(bind, indexes):
    Lying.calls = 0
    try:
        bound = bind(statement(indexes), [b"", b"x" * 60000])
    except Exception as exc:
        return "bind error", type(exc)
    try:
        return "bound", bound.values, bound.routing_key
    except Exception as exc:
        return "routing key error", type(exc)


for indexes in ([Lying(0), Lying(0)], [0, 5], [1, -1], (1, 0), [True, 0]):
    driver = outcome(lambda s, v: BoundStatement(s).bind(v), indexes)
    assert outcome(_binding.bind, indexes) == driver, indexes
    assert outcome(_binding_py.bind, indexes) == driver, indexes
print("ok")
