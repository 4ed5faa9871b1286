"""A RowsDecoder set up anew (RowsDecoder.__init__ called again from Python, here by a column type's
code while rows are decoded) changed its kind of rows under the plans it had cached: tuple rows came
out as named rows, or a row was built from a plan without a row class. A decoder is now set up once."""
from cassandra import cqltypes
from cassandra.protocol import ProtocolHandler

from pyfactories import _driver
from pyfactories.decoding import _fastpath
from pyfactories import decoding
from tests.result_bodies import result_metadata, rows_body

handler = decoding.handler("tuple")
decoder = handler.message_types_by_opcode[0x08].decoder
outcomes = []


class Sneaky(cqltypes.CassandraType):
    typename = "org.pyfactories.Sneaky2"

    @staticmethod
    def deserialize(byts, protocol_version):
        try:
            decoder.__init__(_fastpath.ROWS_NAMED, None, None)
        except TypeError:
            outcomes.append("refused")
        else:
            outcomes.append("set up anew")
        return bytes(byts)


columns = [("k", cqltypes.Int32Type), ("spy", Sneaky)]
meta = result_metadata(columns)
body = rows_body(columns, [[i, b"\x01"] for i in range(3)], metadata=False)
expected = _driver.decode_message(ProtocolHandler, 5, {}, 1, 0, 0x08, body, None, meta).parsed_rows
for _ in range(2):
    got = _driver.decode_message(handler, 5, {}, 1, 0, 0x08, body, None, meta).parsed_rows
    assert got == expected and all(type(row) is tuple for row in got), (got, expected)
assert set(outcomes) == {"refused"}, outcomes
print("ok")
