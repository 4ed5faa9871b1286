"""A body whose metadata section has no columns takes the prepared statement's result_metadata (as the
driver does); the plan must not be cached under those (identical) metadata bytes alone, or a second
statement decodes its rows with the first one's column types."""
import struct

from cassandra import cqltypes
from cassandra.protocol import ProtocolHandler

from pyfactories import _driver
from pyfactories import decoding
from tests.result_bodies import result_metadata, string

body = struct.pack(">iii", 2, 1, 0) + string("ks") + string("t") + struct.pack(">i", 1) + struct.pack(">i", 4) + b"abcd"
ints = result_metadata([("a", cqltypes.Int32Type)])
texts = result_metadata([("s", cqltypes.UTF8Type)])


def rows(handler, meta):
    return _driver.decode_message(handler, 5, {}, 1, 0, 0x08, body, None, meta).parsed_rows


for kind in ("tuple", "named", "dict"):
    handler = decoding.handler(kind)
    for meta in (ints, texts, ints, texts):
        expected = rows(ProtocolHandler, meta)
        got = rows(handler, meta)
        assert [tuple(r.values()) if kind == "dict" else tuple(r) for r in got] == expected, (kind, got, expected)
assert rows(ProtocolHandler, texts) == [("abcd",)]
print("ok")
