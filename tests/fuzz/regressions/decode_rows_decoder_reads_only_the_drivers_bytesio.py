"""RowsDecoder (recv_results_rows) handed a file that is not the driver's BytesIO: one whose getvalue
lies, returns None, or whose tell is negative or past the end. The fast path read the lie, read None's
memory as bytes, or read before the start of the body; now such a file is read by the driver, and the
answer is the driver's (or a DriverException where the driver fails)."""
import io

from cassandra import DriverException, cqltypes
from cassandra.protocol import ProtocolHandler

from pyfactories import decoding
from tests.result_bodies import rows_body

body = rows_body([("a", cqltypes.Int32Type)], [[7]])
lie = rows_body([("a", cqltypes.UTF8Type)], [["x"]])


class Lying(io.BytesIO):
    def getvalue(self):
        return lie


class NoneValue(io.BytesIO):
    def getvalue(self):
        return None


class Tell(io.BytesIO):
    def __init__(self, data, at):
        super().__init__(data)
        self.at = at

    def tell(self):
        return self.at


def files():
    yield Lying(body)
    yield NoneValue(body)
    yield Tell(body, -1_000_000)
    yield Tell(body, len(body) + 100)


driver_message = ProtocolHandler.message_types_by_opcode[0x08]
ours = decoding.handler("tuple").message_types_by_opcode[0x08]
for theirs_f, ours_f in zip(files(), files()):
    theirs_f.seek(4)
    ours_f.seek(4)
    msg = driver_message(2)
    try:
        msg.recv_results_rows(theirs_f, 5, {}, None, None)
        expected = msg.parsed_rows
    except Exception as exc:
        expected = exc
    mine = ours.__new__(ours)
    try:
        ours.decoder(mine, ours_f, 5, {}, None, None)
        got = mine.parsed_rows
    except Exception as exc:
        got = exc
    if isinstance(expected, Exception):
        assert isinstance(got, DriverException), (type(ours_f).__name__, got, expected)
    else:
        assert got == expected, (type(ours_f).__name__, got, expected)
print("ok")
