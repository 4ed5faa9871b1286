"""bind: a serialize that walks the garbage collector's objects never finds the bind's serialized values
list with empty (NULL) slots in it (copying one crashed the interpreter): the slots not filled yet hold
None."""

import gc

from cassandra.cqltypes import Int32Type
from cassandra.protocol import ColumnMetadata
from cassandra.query import BoundStatement, PreparedStatement

from pyfactories.binding import _binding

seen = []


class Peek(Int32Type):
    @classmethod
    def serialize(cls, value, protocol_version):
        for found in gc.get_objects():
            if type(found) is list and len(found) == 7 and found and type(found[0]) is bytes:
                seen.append(list(found))  # copying a slot that is NULL crashes
        return Int32Type.serialize(value, protocol_version)


meta = [ColumnMetadata("ks", "t", f"c{i}", Peek if i == 2 else Int32Type) for i in range(7)]
statement = PreparedStatement(meta, b"id", [0], "INSERT ...", "ks", 5, None, None)
bound = _binding.bind(statement, [1] * 7)
assert bound.values == BoundStatement(statement).bind([1] * 7).values
assert seen and all(all(item is None or type(item) is bytes for item in found) for found in seen)
print("ok")
