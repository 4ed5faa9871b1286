"""A prepared statement's result_metadata list changed in place after its plan was cached (an entry
replaced, one added): the next decode uses the new types, as the driver does, never the cached ones."""
from cassandra import cqltypes
from cassandra.protocol import ProtocolHandler

from pyfactories import _driver
from pyfactories import decoding
from tests.result_bodies import result_metadata, rows_body


def rows(handler, body, meta):
    return _driver.decode_message(handler, 5, {}, 1, 0, 0x08, body, None, meta).parsed_rows


handler = decoding.handler("tuple")
meta = result_metadata([("a", cqltypes.Int32Type)])
body = rows_body([("a", cqltypes.Int32Type)], [[1633837924]], metadata=False)
assert rows(handler, body, meta) == rows(ProtocolHandler, body, meta) == [(1633837924,)]
meta[0] = ("ks", "t", "s", cqltypes.UTF8Type)  # the same list, another type
assert rows(ProtocolHandler, body, meta) == [("abcd",)]
assert rows(handler, body, meta) == [("abcd",)]
meta.append(("ks", "t", "b", cqltypes.Int32Type))  # the same list, one more column
body2 = rows_body([("s", cqltypes.UTF8Type), ("b", cqltypes.Int32Type)], [["x", 5]], metadata=False)
assert rows(handler, body2, meta) == rows(ProtocolHandler, body2, meta) == [("x", 5)]
print("ok")
