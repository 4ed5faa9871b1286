"""The compiled codec wrote (``encode``, and ``send_msg``'s shortcut) and read (the v5 read loop)
segment headers with the flag at bit 17 whatever the codec's ``FLAG_OFFSET`` said; the twin and the
driver honour it (the read loop leaves a codec whose offset is not 17 to the driver's own loop). A
codec whose ``FLAG_OFFSET`` was changed (on it, on a subclass, or on the class) now goes the
twin's way: the same bytes, the same frames."""

import io
import struct

from cassandra import segment
from cassandra.connection import Connection
from cassandra.protocol import ProtocolHandler, QueryMessage

from pyfactories.connection import _encoding
from pyfactories.connection import _encoding_py
from pyfactories.connection import _framing_py
from pyfactories.connection import _framing


def encoded(module, how, msg=b"payload"):
    cls = module.SegmentCodec
    if how == "subclass":
        cls = type("Shifted", (module.SegmentCodec,), {"FLAG_OFFSET": 20})
    codec = cls()
    if how == "instance":
        codec.FLAG_OFFSET = 20
    out = io.BytesIO()
    codec.encode(out, msg)
    return out.getvalue()


for how in ("instance", "subclass"):
    assert encoded(_framing, how) == encoded(_framing_py, how), how
    drv = segment.SegmentCodec()
    drv.FLAG_OFFSET = 20
    out = io.BytesIO()
    drv.encode(out, b"payload")
    assert encoded(_framing, how) == out.getvalue()


class Sending(Connection):
    def push(self, data):
        self.pushed.append(data)


def sent(send_msg):
    conn = type("C", (Sending,), {"send_msg": send_msg})("127.0.0.1", protocol_version=5)
    conn.pushed = []
    conn._is_checksumming_enabled = True
    conn._segment_codec = _framing.SegmentCodec()
    conn._segment_codec.FLAG_OFFSET = 20
    conn.send_msg(QueryMessage("SELECT 1", 1), 1, cb=None, encoder=ProtocolHandler.encode_message)
    return conn.pushed


assert sent(_encoding.send_msg) == sent(_encoding_py.send_msg) == sent(Connection.send_msg)


class Recorder(Connection):
    def __init__(self, codec):
        super().__init__("127.0.0.1", protocol_version=5)
        self.events = []
        self._io_buffer.set_checksumming_buffer()
        self._is_checksumming_enabled = True
        self._segment_codec = codec

    def process_msg(self, header, body):
        self.events.append((header.stream, body))

    def defunct(self, exc):
        self.events.append(("defunct", type(exc).__name__))
        self.is_defunct = True


def read(module):
    codec = module.SegmentCodec()
    codec.FLAG_OFFSET = 20
    conn = type("C", (Recorder,), {"process_io_buffer": module.process_io_buffer})(codec)
    out = io.BytesIO()
    codec.encode(out, struct.pack(">BBhBi", 0x85, 0, 4, 8, 2) + b"ok")
    conn._iobuf.write(out.getvalue())
    conn.process_io_buffer()
    return conn.events


assert read(_framing) == read(_framing_py)
print("ok")
