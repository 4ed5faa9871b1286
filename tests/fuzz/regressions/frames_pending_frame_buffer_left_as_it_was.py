"""A v5 read that brought no whole segment, over a cql frame buffer holding the start of a large
frame, had the compiled loop replace that buffer with a copy positioned at its end, where the twin
leaves the buffer (and its position) as it was. It is now left alone when nothing was read."""

import io
import struct

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
        self.events.append((header.stream, body))


def run(module, position):
    conn = type("C", (Recorder,), {"process_io_buffer": module.process_io_buffer})(module.SegmentCodec())
    pending = struct.pack(">BBhBi", 0x85, 0, 1, 8, 5000) + b"x" * 7
    cql = io.BytesIO(pending)
    cql.seek(position)
    conn._io_buffer._cql_frame_buffer = cql
    conn._iobuf.write(b"\x05\x00")  # the first bytes of a segment header only
    conn.process_io_buffer()
    buf = conn._io_buffer._cql_frame_buffer
    return conn.events, buf is cql, buf.getvalue(), buf.tell(), conn._iobuf.getvalue()


for position in (0, 10, 16):
    want = run(_framing_py, position)
    assert want[1] and want[3] == position
    assert run(_framing, position) == want, (position, run(_framing, position), want)
print("ok")
