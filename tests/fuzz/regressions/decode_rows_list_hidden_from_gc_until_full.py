"""The list of rows was allocated with all its slots NULL and tracked by the collector while its rows
were decoded: a column value's Python code that walked gc.get_objects() (as a memory profiler does)
and read that list dereferenced NULL (a segfault). The list is now tracked only once it is full."""
import gc

from cassandra import cqltypes
from cassandra.protocol import ProtocolHandler

from pyfactories import _driver
from pyfactories import decoding
from tests.result_bodies import result_metadata, rows_body

walk = [False]


class Walker(cqltypes.CassandraType):
    typename = "org.pyfactories.Walker"

    @staticmethod
    def deserialize(byts, protocol_version):
        if walk[0]:
            for obj in gc.get_objects():
                if type(obj) is list:
                    list(obj)
        return bytes(byts)


columns = [("k", cqltypes.Int32Type), ("w", Walker)]
meta = result_metadata(columns)
body = rows_body(columns, [[i, b"\x01"] for i in range(3)], metadata=False)
walk[0] = True
expected = _driver.decode_message(ProtocolHandler, 5, {}, 1, 0, 0x08, body, None, meta).parsed_rows
for kind in ("tuple", "named", "dict"):
    got = _driver.decode_message(decoding.handler(kind), 5, {}, 1, 0, 0x08, body, None, meta).parsed_rows
    assert [tuple(r.values()) if kind == "dict" else tuple(r) for r in got] == expected, (kind, got)
    assert gc.is_tracked(got)
print("ok")
