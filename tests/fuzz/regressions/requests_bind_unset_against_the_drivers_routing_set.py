"""bind: an unset value is refused for the routing key as the driver's ``is_routing_key_index`` refuses it,
which keeps the set it made at its first unset value even when the routing key indexes change later."""

from cassandra.cqltypes import Int32Type
from cassandra.protocol import ColumnMetadata
from cassandra.query import UNSET_VALUE, BoundStatement, PreparedStatement

from pyfactories.binding import _binding
from pyfactories.binding import _binding_py


def run(bind):
    meta = [ColumnMetadata("ks", "t", f"c{i}", Int32Type) for i in range(3)]
    statement = PreparedStatement(meta, b"id", [0], "INSERT ...", "ks", 5, None, None)
    BoundStatement(statement).bind([1, UNSET_VALUE])  # the driver makes its set: {0}
    statement.routing_key_indexes = [1]
    results = []
    for values in ([1, UNSET_VALUE, 3], [UNSET_VALUE, 2, 3]):
        try:
            bound = bind(statement, values)
            results.append(("bound", bound.values, bound.routing_key))
        except Exception as exc:
            results.append(("error", type(exc), str(exc)))
    return results


driver = run(lambda s, v: BoundStatement(s).bind(v))
assert driver[0][0] == "bound" and driver[1][0] == "error", driver
assert run(_binding.bind) == driver
assert run(_binding_py.bind) == driver


def own_binds(bind):
    """Every bind by ``bind``: its first unset value makes the set the driver's would have made."""
    meta = [ColumnMetadata("ks", "t", "c0", Int32Type)]
    statement = PreparedStatement(meta, b"id", [], "INSERT ...", "ks", 5, None, None)
    bind(statement, [])
    statement.routing_key_indexes[:] = [0]
    try:
        bound = bind(statement, [])
        return "bound", bound.values, bound.routing_key
    except Exception as exc:
        return "error", type(exc), str(exc)


driver = own_binds(lambda s, v: BoundStatement(s).bind(v))
assert driver[0] == "bound", driver
assert own_binds(_binding.bind) == driver
assert own_binds(_binding_py.bind) == driver
print("ok")
