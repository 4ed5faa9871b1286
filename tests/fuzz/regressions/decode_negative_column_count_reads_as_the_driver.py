"""A metadata section with a negative column count: the driver reads it as no columns and decodes the
rows with the prepared statement's result_metadata; the fast path answers the same (it raised)."""
import struct

from cassandra import cqltypes
from cassandra.protocol import ProtocolHandler

from pyfactories import _driver
from pyfactories import decoding
from tests.result_bodies import result_metadata, string

body = struct.pack(">iii", 2, 1, -3) + string("ks") + string("t") + struct.pack(">i", 1) + struct.pack(">i", 4) + b"abcd"
meta = result_metadata([("a", cqltypes.Int32Type)])
expected = _driver.decode_message(ProtocolHandler, 5, {}, 1, 0, 0x08, body, None, meta).parsed_rows
assert expected == [(1633837924,)]
for kind in ("tuple", "named", "dict"):
    got = _driver.decode_message(decoding.handler(kind), 5, {}, 1, 0, 0x08, body, None, meta).parsed_rows
    assert [tuple(r.values()) if kind == "dict" else tuple(r) for r in got] == expected, (kind, got)
print("ok")
