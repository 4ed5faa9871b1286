"""result_metadata whose __len__ lies (a list subclass): the fast path sized its plan with __len__ and
iterated for the types, then failed with an IndexError (and read past its per-column table) where the
driver decodes the rows. Anything but an exact list or tuple of exact tuples is now read by the driver."""
from cassandra import cqltypes
from cassandra.protocol import ProtocolHandler

from pyfactories import _driver
from pyfactories import decoding
from tests.result_bodies import result_metadata, rows_body


class Longer(list):
    def __len__(self):
        return 2


class Shorter(list):
    def __len__(self):
        return 0


class Entry(tuple):
    def __getitem__(self, i):
        return ("ks", "t", "z", cqltypes.BytesType)[i]


body = rows_body([("a", cqltypes.Int32Type)], [[1]] * 3, metadata=False) + b"\x00" * 8
plain = result_metadata([("a", cqltypes.Int32Type)])
for meta in (Longer(plain), Shorter(plain), [Entry(plain[0])], tuple(plain)):
    expected = _driver.decode_message(ProtocolHandler, 5, {}, 1, 0, 0x08, body, None, meta).parsed_rows
    got = _driver.decode_message(decoding.handler("tuple"), 5, {}, 1, 0, 0x08, body, None, meta).parsed_rows
    assert got == expected, (type(meta).__name__, got, expected)
print("ok")
