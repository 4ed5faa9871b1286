"""The v5 read loop took the size of the pending frame bytes from the cql frame buffer's ``tell()``,
and appended the next segments' payloads at that position: a buffer whose position was not at its
end (seeked back, or an object whose ``tell`` says something else) had bytes of the pending frame
overwritten (a wrong frame delivered), or had 9 bytes read from a shorter buffer. The size is now
the buffer's own, read only from the driver's ``BytesIO``; another object is read as the twin reads
it (``getvalue``); the answer is the twin's."""

import io
import struct

from cassandra import segment
from cassandra.connection import Connection

from pyfactories.connection import _framing_py
from pyfactories.connection import _framing


class Recorder(Connection):
    def __init__(self, codec):
        super().__init__("127.0.0.1", protocol_version=5)
        self.events = []
        self._io_buffer.set_checksumming_buffer()
        self._is_checksumming_enabled = True
        self._segment_codec = codec

    def process_msg(self, header, body):
        self.events.append((header.stream, header.opcode, body))

    def defunct(self, exc):
        self.events.append(("defunct", type(exc).__name__))
        self.is_defunct = True


class Lying(io.BytesIO):
    def __init__(self, data, told):
        super().__init__(data)
        self.seek(0, 2)
        self.told = told

    def tell(self):
        return self.told


def frame(stream, body):
    return struct.pack(">BBhBi", 0x85, 0, stream, 8, len(body)) + body


def run(module, how):
    codec = module.SegmentCodec()
    conn = type("C", (Recorder,), {"process_io_buffer": module.process_io_buffer})(codec)
    big = frame(1, b"B" * 60)
    pending, rest = big[:20], big[20:]
    if how == "seeked":
        cql = io.BytesIO(pending)
        cql.seek(12)
    elif how == "seeked-short":
        cql = io.BytesIO(pending[:4])
        cql.seek(2)
    elif how == "tell-too-far":
        cql = Lying(pending[:5], 10**6)
    elif how == "tell-short":
        cql = Lying(pending, 3)
    else:
        cql = Lying(pending, 12)
    conn._io_buffer._cql_frame_buffer = cql
    for part in (rest[:10], rest[10:] + frame(2, b"after")):  # two reads: the frame waits in between
        out = io.BytesIO()
        segment.SegmentCodec()._encode_segment(out, part, False)
        conn._iobuf.write(out.getvalue())
        conn.process_io_buffer()
    return conn.events


for how in ("seeked", "seeked-short", "tell-too-far", "tell-short", "tell-mid"):
    want = run(_framing_py, how)
    got = run(_framing, how)
    assert got == want, (how, got, want)
assert run(_framing, "seeked")[0] == (1, 8, b"B" * 60)
print("ok")
