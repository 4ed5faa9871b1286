"""bind: the plan cached on a prepared statement is made again when its column metadata or routing key
indexes are changed in place (the same list, other items), so a column that became a bigint is not bound
as the int it was."""

from cassandra.cqltypes import Int32Type, LongType, UTF8Type
from cassandra.protocol import ColumnMetadata
from cassandra.query import BoundStatement, PreparedStatement

from pyfactories.binding import _binding
from pyfactories.binding import _binding_py


def run(bind):
    meta = [ColumnMetadata("ks", "t", "c0", Int32Type), ColumnMetadata("ks", "t", "c1", UTF8Type)]
    indexes = [0]
    statement = PreparedStatement(meta, b"id", indexes, "INSERT ...", "ks", 5, None, None)
    results = []

    def bound(values):  # the routing key read at once, as a request reads it
        statement_bound = bind(statement, values)
        results.append((statement_bound.values, statement_bound.routing_key))

    bound([1, "a"])
    meta[0] = ColumnMetadata("ks", "t", "c0", LongType)
    bound([1, "a"])
    indexes[0] = 1
    bound([1, "a"])
    meta.append(ColumnMetadata("ks", "t", "c2", Int32Type))
    bound([1, "a", 5])
    indexes.append(2)
    bound([1, "a", 5])
    return results


driver = run(lambda s, v: BoundStatement(s).bind(v))
assert driver[1][0][0] == (1).to_bytes(8, "big")
assert run(_binding.bind) == driver
assert run(_binding_py.bind) == driver
print("ok")
