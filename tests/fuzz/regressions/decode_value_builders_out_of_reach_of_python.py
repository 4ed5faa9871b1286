"""The class the decoder builds UUID values of in C, and the names of its slots, were module attributes
of pyfactories.decoding._fastpath: rebinding one (to an object that is not a type) made the next uuid column
allocate an instance of it in C (a segfault). They are C globals now; a module attribute of that
name changes nothing the decoder reads."""
import uuid

from cassandra import cqltypes
from cassandra.protocol import ProtocolHandler

from pyfactories import _driver
from pyfactories.decoding import _fastpath
from pyfactories import decoding
from tests.result_bodies import rows_body

body = rows_body([("u", cqltypes.UUIDType), ("t", cqltypes.TimeUUIDType)],
                 [[uuid.UUID(int=7), uuid.UUID("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")]])
expected = _driver.decode_message(ProtocolHandler, 5, {}, 1, 0, 0x08, body, None, None).parsed_rows
_fastpath._UUID = 5
_fastpath._UUID_INT = object()
_fastpath._SAFE_UNKNOWN = "not safe"
_fastpath._BytesIO = list
for kind in ("tuple", "named", "dict"):
    got = _driver.decode_message(decoding.handler(kind), 5, {}, 1, 0, 0x08, body, None, None).parsed_rows
    values = [tuple(r.values()) if kind == "dict" else tuple(r) for r in got]
    assert values == expected, (kind, values, expected)
    assert all(type(v) is uuid.UUID and v.is_safe is uuid.SafeUUID.unknown for v in values[0])
print("ok")
