"""A column of a custom type the driver has no class for: the driver makes one up (its values stay
bytes) until the application defines a class of that name, and from then on decodes with it. The plan
was cached under the metadata bytes alone, so the fast path kept giving bytes. Plans with such types
are no longer cached."""
import struct

from cassandra import cqltypes
from cassandra.protocol import ProtocolHandler

from pyfactories import _driver
from pyfactories import decoding
from tests.result_bodies import string

body = (struct.pack(">iii", 2, 1, 1) + string("ks") + string("t") + string("c") + struct.pack(">H", 0)
        + string("org.apache.cassandra.db.marshal.PfDefinedLaterType") + struct.pack(">i", 1)
        + struct.pack(">i", 2) + b"hi")


def rows(handler):
    return [tuple(r.values()) if isinstance(r, dict) else tuple(r)
            for r in _driver.decode_message(handler, 5, {}, 1, 0, 0x08, body, None, None).parsed_rows]


for kind in ("tuple", "named", "dict"):
    assert rows(decoding.handler(kind)) == rows(ProtocolHandler) == [(b"hi",)]


class PfDefinedLaterType(cqltypes.CassandraType):
    typename = "pf_defined_later"

    @staticmethod
    def deserialize(byts, protocol_version):
        return byts.decode().upper()


assert rows(ProtocolHandler) == [("HI",)]
for kind in ("tuple", "named", "dict"):
    assert rows(decoding.handler(kind)) == [("HI",)], kind
print("ok")
