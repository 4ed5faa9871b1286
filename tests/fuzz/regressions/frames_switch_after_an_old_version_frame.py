"""On a v5 connection before segments, the read loop set the io buffer's position past a frame (where
the driver's is when the handshake's last frame switches the connection to segments) only for
frames of protocol v3 and later: a v1/v2 frame that switched it left the position at the end of the
read, and the bytes after it were lost. Every supported version's frame is now positioned past, as
in the twin."""

import io
import struct

from cassandra import ProtocolVersion
from cassandra import segment
from cassandra.connection import Connection

from pyfactories.connection import _framing_py
from pyfactories.connection import _framing

READY = b"READY"


class Recorder(Connection):
    def __init__(self):
        super().__init__("127.0.0.1", protocol_version=5)
        self.events = []

    def process_msg(self, header, body):
        self.events.append((header.version, header.stream, body))
        if body == READY:
            self._enable_checksumming()

    def defunct(self, exc):
        self.events.append(("defunct", type(exc).__name__))
        self.is_defunct = True


def frame(version, stream, body):
    fmt = ">BBhBi" if version >= 3 else ">BBbBi"
    return struct.pack(fmt, 0x80 | version, 0, stream, 8, len(body)) + body


def run(module, version):
    conn = type("C", (Recorder,), {"process_io_buffer": module.process_io_buffer})()
    out = io.BytesIO()
    segment.SegmentCodec()._encode_segment(out, frame(5, 7, b"after"), True)
    conn._iobuf.write(frame(version, 1, READY) + out.getvalue())
    conn.process_io_buffer()
    return conn.events


for version in sorted(ProtocolVersion.SUPPORTED_VERSIONS):
    if version > 5:
        continue
    want = run(_framing_py, version)
    assert run(_framing, version) == want, (version, run(_framing, version), want)
    assert want[-1] == (5, 7, b"after")
print("ok")
