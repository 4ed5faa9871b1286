"""A paging state of length -1 (or any negative length): the driver reads the rest of the body as the
paging state and then fails; the fast path raises MalformedResult. It decoded rows and a None state
whenever it did not parse the metadata: on a cached plan, or with the prepared statement's metadata."""
import struct

from cassandra import cqltypes
from cassandra.protocol import ProtocolHandler

from pyfactories import _driver
from pyfactories.decoding import _fastpath
from pyfactories import decoding
from tests.result_bodies import result_metadata, rows_body

columns = [("a", cqltypes.Int32Type)]
at = 12  # kind, flags, column count, then the paging state's length
for length, meta in ((-1, None), (-2, None), (-(2**31), None), (-1, result_metadata(columns))):
    good = rows_body(columns, [[1]], paging_state=b"\x01", metadata=meta is None)
    for kind in ("tuple", "named", "dict"):  # the plan is cached
        _driver.decode_message(decoding.handler(kind), 5, {}, 1, 0, 0x08, good, None, meta)
    body = good[:at] + struct.pack(">i", length) + good[at + 5:]
    try:
        _driver.decode_message(ProtocolHandler, 5, {}, 1, 0, 0x08, body, None, meta)
    except Exception:
        pass
    else:
        raise AssertionError("the driver decoded it")
    for kind in ("tuple", "named", "dict"):
        try:
            _driver.decode_message(decoding.handler(kind), 5, {}, 1, 0, 0x08, body, None, meta)
        except _fastpath.MalformedResult:
            pass
        else:
            raise AssertionError(f"{kind}: decoded a body with a paging state of length {length}")
print("ok")
