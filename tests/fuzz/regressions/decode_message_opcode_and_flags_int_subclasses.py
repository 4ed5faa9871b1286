"""decode_message given an opcode or flags that are int subclasses whose comparisons lie: the fast path
took a frame of another opcode (or with tracing flags) for a plain RESULT and decoded it as rows, where
the driver decodes what the frame is. Only exact ints take the fast decode now."""
from cassandra import cqltypes
from cassandra.protocol import ProtocolHandler

from pyfactories import _driver
from pyfactories import decoding
from tests.result_bodies import rows_body


class Lying(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__


body = rows_body([("a", cqltypes.Int32Type)], [[1]])


def outcome(handler, flags, opcode):
    try:
        msg = _driver.decode_message(handler, 5, {}, 1, flags, opcode, body, None, None)
    except Exception as exc:
        return ("error", type(exc).__name__)
    return ("ok", getattr(msg, "kind", None), getattr(msg, "parsed_rows", None))


for flags, opcode in ((0, Lying(0x0E)), (Lying(0x02), 8), (Lying(0), Lying(5))):
    expected = outcome(ProtocolHandler, flags, opcode)
    got = outcome(decoding.handler("tuple"), flags, opcode)
    if expected[0] == "error":
        assert got[0] == "error", (flags, opcode, got, expected)
    else:
        assert got == expected, (flags, opcode, got, expected)
print("ok")
