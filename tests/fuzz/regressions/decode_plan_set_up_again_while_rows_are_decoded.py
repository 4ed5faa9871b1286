"""A cached Plan is reachable from Python (gc.get_referents of the decoder); a column type's Python
code ran Plan.__init__ on it with more columns while its rows were decoded: the decoder then wrote
past its per-row array (a heap overflow: other rows than the driver's, or a crash). A plan is now
built once, and the decoder reads what it sizes with from its own references."""
import gc

from cassandra import cqltypes
from cassandra.protocol import ProtocolHandler

from pyfactories import _driver
from pyfactories.decoding import _fastpath
from pyfactories import decoding
from tests.result_bodies import result_metadata, rows_body

handler = decoding.handler("tuple")
decoder = handler.message_types_by_opcode[0x08].decoder
wide = result_metadata([(f"c{i}", cqltypes.Int32Type) for i in range(200)])
tried = []


class Sneaky(cqltypes.CassandraType):
    typename = "org.pyfactories.Sneaky"

    @staticmethod
    def deserialize(byts, protocol_version):
        for ref in gc.get_referents(decoder):
            if isinstance(ref, dict):
                for plan in list(ref.values()):
                    if isinstance(plan, _fastpath.Plan):
                        try:
                            plan.__init__(wide, _fastpath.ROWS_NAMED, 5)
                        except TypeError:
                            tried.append("refused")
                        else:
                            tried.append("rebuilt")
        return bytes(byts)


columns = [("k", cqltypes.Int32Type), ("spy", Sneaky)]
meta = result_metadata(columns)
body = rows_body(columns, [[i, b"\x01\x02\x03\x04"] for i in range(4)], metadata=False) + b"\x00\x00\x00\x04\x00\x00\x00\x01" * 800
expected = _driver.decode_message(ProtocolHandler, 5, {}, 1, 0, 0x08, body, None, meta).parsed_rows
got = _driver.decode_message(handler, 5, {}, 1, 0, 0x08, body, None, meta).parsed_rows
assert got == expected, (got, expected)
assert tried and set(tried) == {"refused"}, tried
print("ok")
