"""A cached Plan's column names were a list reachable from Python: appending to it changed the column
names of every later result decoded with that plan. They are now tuples (read-only)."""
import gc

from cassandra import cqltypes
from cassandra.protocol import ProtocolHandler

from pyfactories import _driver
from pyfactories.decoding import _fastpath
from pyfactories import decoding
from tests.result_bodies import rows_body

handler = decoding.handler("tuple")
decoder = handler.message_types_by_opcode[0x08].decoder
body = rows_body([("a", cqltypes.Int32Type)], [[1]])
_driver.decode_message(handler, 5, {}, 1, 0, 0x08, body, None, None)
for ref in gc.get_referents(decoder):
    if isinstance(ref, dict):
        for plan in ref.values():
            if isinstance(plan, _fastpath.Plan):
                for attr in ("names", "types", "column_metadata"):
                    try:
                        getattr(plan, attr).append("evil")
                    except AttributeError:
                        pass
expected = _driver.decode_message(ProtocolHandler, 5, {}, 1, 0, 0x08, body, None, None)
got = _driver.decode_message(handler, 5, {}, 1, 0, 0x08, body, None, None)
assert got.column_names == expected.column_names == ["a"], got.column_names
assert got.parsed_rows == expected.parsed_rows
assert len(got.column_types) == 1
print("ok")
