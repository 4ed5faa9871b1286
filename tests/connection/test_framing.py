"""Framing of ``pyfactories.connection._framing`` (ids ``c``) and its twin ``pyfactories.connection._framing_py`` (``py``),
against the driver's: checksums, segment codec bytes and errors, and the read loop on streams of
v4 frames and v5 segments cut into random reads, well-formed and corrupted."""

from __future__ import annotations

import gc
import importlib
import io
import random
import struct
import tracemalloc
import zlib

import pytest
from cassandra import DriverException, ProtocolVersion
from cassandra import segment as drv
from cassandra.connection import Connection, CrcMismatchException, ProtocolError
from cassandra.marshal import int32_pack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MAX = drv.Segment.MAX_PAYLOAD_LENGTH
MODULES = {"c": "pyfactories.connection._framing", "py": "pyfactories.connection._framing_py"}
BOUNDARY_SIZES = [0, 1, 2, MAX - 1, MAX, MAX + 1, 2 * MAX, 2 * MAX + 1]


@pytest.fixture(scope="module", params=sorted(MODULES), ids=sorted(MODULES))
def framing(request):
    return importlib.import_module(MODULES[request.param])


def _compress(data: bytes) -> bytes:  # the driver's compressors carry the length in 4 leading bytes
    return int32_pack(len(data)) + zlib.compress(data, 1)


def _decompress(data: bytes) -> bytes:
    return zlib.decompress(data[4:])


def codecs(module):
    """(the driver's codec, ours) without and with compression (zlib standing in for lz4)."""
    return [(drv.SegmentCodec(), module.SegmentCodec()),
            (drv.SegmentCodec(_compress, _decompress), module.SegmentCodec(_compress, _decompress))]


def outcome(fn, *args):
    """What a call gives: ("ok", value) or ("error", type, message)."""
    try:
        return ("ok", fn(*args))
    except Exception as exc:
        return ("error", type(exc), str(exc))


def payload(size: int, rnd: random.Random, compressible: bool) -> bytes:
    if compressible:
        return (b"row %d " % rnd.randrange(1000)) * (size // 8) + b"x" * (size % 8)
    return rnd.randbytes(size)


# --- checksums and the codec ---------------------------------------------------------------------

@given(data=st.integers(0, 2**64 - 1), length=st.integers(0, 8))
def test_crc24_is_the_drivers(framing, data, length):
    assert framing.crc24(data, length) == drv.compute_crc24(data, length)


@given(data=st.binary(max_size=300), value=st.integers(0, 2**32 - 1))
def test_crc32_is_zlibs(framing, data, value):
    assert framing.crc32(data, value) == drv.compute_crc32(data, value)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(size=st.sampled_from(BOUNDARY_SIZES) | st.integers(0, 400), seed=st.integers(0, 2**32),
       compressible=st.booleans(), compressed=st.booleans())
def test_encode_and_decode_are_the_drivers(framing, size, seed, compressible, compressed):
    theirs, ours = codecs(framing)[compressed]
    msg = payload(size, random.Random(seed), compressible)
    a, b = io.BytesIO(), io.BytesIO()
    theirs.encode(a, msg)
    ours.encode(b, msg)
    assert b.getvalue() == a.getvalue()
    mine, driver = io.BytesIO(b.getvalue()), io.BytesIO(a.getvalue())
    while driver.tell() < len(a.getvalue()):
        header, expected = ours.decode_header(mine), theirs.decode_header(driver)
        assert vars(header) == vars(expected)
        got, want = ours.decode(mine, header), theirs.decode(driver, expected)
        assert (got.payload, got.is_self_contained) == (want.payload, want.is_self_contained)
    assert mine.tell() == driver.tell()


@given(payload_length=st.integers(-3, MAX + 2), uncompressed=st.integers(-2, 2**20),
       self_contained=st.sampled_from([True, False, 0, 1, None]), compressed=st.booleans())
def test_encode_header_is_the_drivers(framing, payload_length, uncompressed, self_contained, compressed):
    theirs, ours = codecs(framing)[compressed]
    a, b = io.BytesIO(), io.BytesIO()
    want = outcome(theirs.encode_header, a, payload_length, uncompressed, self_contained)
    got = outcome(ours.encode_header, b, payload_length, uncompressed, self_contained)
    assert got == want and b.getvalue() == a.getvalue()
    if want[0] == "error":
        assert want[1] is DriverException


@settings(max_examples=150)
@given(size=st.integers(0, 300), seed=st.integers(0, 2**32), compressed=st.booleans(),
       flip=st.integers(0, 10_000), cut=st.integers(0, 10_000), truncate=st.booleans())
def test_decode_of_damaged_segments_is_the_drivers(framing, size, seed, compressed, flip, cut, truncate):
    theirs, ours = codecs(framing)[compressed]
    buf = io.BytesIO()
    theirs.encode(buf, payload(size, random.Random(seed), seed % 2 == 0))
    data = bytearray(buf.getvalue())
    if truncate:
        data = data[:cut % len(data)]
    else:
        data[flip % len(data)] ^= 1 << (seed % 8)

    def decode(codec, raw):
        stream = io.BytesIO(bytes(raw))
        header = codec.decode_header(stream)
        segment = codec.decode(stream, header)
        return vars(header), segment.payload, segment.is_self_contained

    want, got = outcome(decode, theirs, data), outcome(decode, ours, data)
    assert got == want
    if not truncate:  # every single flipped bit is caught by one of the two checksums
        assert want[:2] == ("error", drv.CrcException)


# --- the read loop ---------------------------------------------------------------------------------

class Recorder(Connection):
    """A driver ``Connection`` without a socket that records what its read loop delivers."""

    def __init__(self, protocol_version: int, codec=None):
        super().__init__("127.0.0.1", protocol_version=protocol_version)
        self.events: list[tuple] = []
        self.codec_for_segments = codec
        if codec is not None:  # after the handshake
            self._io_buffer.set_checksumming_buffer()
            self._is_checksumming_enabled = True
            self._segment_codec = codec

    def process_msg(self, header, body):
        self.events.append(("frame", header.version, header.flags, header.stream, header.opcode,
                            header.body_offset, header.end_pos, type(body), body))
        if body == READY and ProtocolVersion.has_checksumming_support(self.protocol_version):
            self._enable_checksumming()

    def defunct(self, exc):
        if not self.is_defunct:
            self.is_defunct = True
            self.events.append(("defunct", type(exc), str(exc)))

    def _enable_checksumming(self):
        super()._enable_checksumming()
        if self.codec_for_segments is not None:
            self._segment_codec = self.codec_for_segments

    def close(self):
        self.is_closed = True

    def feed(self, chunk: bytes) -> None:
        """What the reactor does with one read (nothing once the connection is defunct)."""
        if not self.is_defunct:
            self._iobuf.write(chunk)
            self.process_io_buffer()

    def frames(self):
        return [e for e in self.events if e[0] == "frame"]

    def errors(self):
        return [e for e in self.events if e[0] == "defunct"]


READY = b"\x00READY-switches-to-segments"


def connections(framing, protocol_version, segmented, compressed):
    """(the driver's loop, ours) on recorders alike: segments with ``codecs(...)[compressed]``."""
    theirs, ours = codecs(framing)[compressed]
    Ours = type("Ours", (Recorder,), {"process_io_buffer": framing.process_io_buffer})
    return (Recorder(protocol_version, theirs if segmented else None),
            Ours(protocol_version, ours if segmented else None), theirs)


def frame(version: int, stream: int, body: bytes, opcode: int = 8, flags: int = 0) -> bytes:
    if version >= 3:
        return struct.pack(">BBhBi", version | 0x80, flags, stream, opcode, len(body)) + body
    return struct.pack(">BBbBi", version | 0x80, flags, stream, opcode, len(body)) + body


def segments(codec, frames_bytes: list[bytes], rnd: random.Random) -> bytes:
    """Frames packed into segments as a server does: several small frames to a self-contained
    segment, a large one cut across segments that are not."""
    out = io.BytesIO()
    batch = b""
    for f in frames_bytes + [None]:
        if f is not None and len(batch) + len(f) <= MAX and rnd.random() < 0.7:
            batch += f
            continue
        if batch:
            codec._encode_segment(out, batch, True)
        batch = b""
        if f is None:
            break
        if len(f) <= MAX:
            batch = f
        else:
            for i in range(0, len(f), MAX):
                codec._encode_segment(out, f[i:i + MAX], False)
    return out.getvalue()


def chunks(data: bytes, rnd: random.Random, small: bool) -> list[bytes]:
    out, i = [], 0
    while i < len(data):
        n = rnd.choice([1, 2, 5, 9, 64, 4096]) if small else rnd.choice([4096, 65536, 300_000])
        out.append(data[i:i + n])
        i += n
    return out


def stream(framing, rnd, version, segmented, compressed, n_frames, big):
    theirs_conn, ours_conn, codec = connections(framing, version, segmented, compressed)
    bodies = [payload(rnd.choice([0, 1, 50, 3000]) if not (big and i == 1) else 3 * MAX + 7, rnd, rnd.random() < 0.5)
              for i in range(n_frames)]
    frames_bytes = [frame(version, rnd.randrange(-1, 32768 if version >= 3 else 128), b, rnd.randrange(256), rnd.randrange(256))
                    for b in bodies]
    data = segments(codec, frames_bytes, rnd) if segmented else b"".join(frames_bytes)
    return theirs_conn, ours_conn, data, frames_bytes, codec


#: The protocol versions of the frames read (scylla-driver supports 3 to 5, cassandra-driver 2 too).
VERSIONS = [v for v in (5, 4, 3, 2) if v in ProtocolVersion.SUPPORTED_VERSIONS]


def expected_events(frames_bytes: list[bytes]) -> list[tuple]:
    """What ``Recorder`` records for well-formed frames, read from their own bytes."""
    out = []
    for f in frames_bytes:
        version = f[0] & 0x7F
        size = 9 if version >= 3 else 8
        flags, stream, op, length = struct.unpack_from(">BhBi" if version >= 3 else ">BbBi", f, 1)
        out.append(("frame", version, flags, stream, op, size, size + length, bytes, f[size:]))
    return out


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), version=st.sampled_from(VERSIONS), segmented=st.booleans(),
       compressed=st.booleans(), n_frames=st.integers(1, 12), big=st.booleans(), small=st.booleans())
def test_frames_delivered_are_the_drivers(framing, seed, version, segmented, compressed, n_frames, big, small):
    """Ours reads in random pieces; the driver's v4 loop too, its v5 loop in one read (reads that end
    within a segment's first 6 bytes lose them there: ``test_a_read_ending_in_a_segment_header``)."""
    rnd = random.Random(seed)
    segmented = segmented and version >= 5
    theirs, ours, data, frames_bytes, _ = stream(framing, rnd, version, segmented, compressed, n_frames, big)
    for chunk in chunks(data, rnd, small):
        if not segmented:
            theirs.feed(chunk)
        ours.feed(chunk)
        # every whole frame at once (the driver may hold one back while a segment is incomplete)
        assert ours.frames()[:len(theirs.frames())] == theirs.frames()
    if segmented:
        theirs.feed(data)
    assert ours.events == theirs.events == expected_events(frames_bytes)
    for conn in (ours, theirs):
        assert conn._io_buffer.readable_io_bytes() == 0 and conn._io_buffer.readable_cql_frame_bytes() == 0
        assert conn._iobuf.getvalue() == b""


@pytest.mark.parametrize("split", [1, 3, 5])
def test_a_read_ending_in_a_segment_header(framing, split):
    """The driver drops the first bytes of a segment header when a read ends within them (its
    ``reset_io_buffer`` keeps what follows the read position, which is the end) and then fails the
    next segment's CRC; ours keeps them and delivers the frame."""
    theirs, ours, codec = connections(framing, 5, True, False)
    out = io.BytesIO()
    codec._encode_segment(out, frame(5, 1, b"first"), True)
    codec._encode_segment(out, frame(5, 2, b"second"), True)
    data = out.getvalue()
    cut = len(data) - (6 + 9 + 6 + 4) + split
    for conn in (theirs, ours):
        conn.feed(data[:cut])
        conn.feed(data[cut:])
    assert [e[3] for e in ours.frames()] == [1, 2] and ours.errors() == []
    assert [e[3] for e in theirs.frames()] == [1] and theirs.errors()[0][1] is CrcMismatchException


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), version=st.sampled_from([5, 4]), compressed=st.booleans(),
       n_after=st.integers(0, 4), small=st.booleans())
def test_handshake_switch_to_segments_mid_read(framing, seed, version, compressed, n_after, small):
    """The handshake's last frame turns segments on: what follows it in the same read is segments."""
    rnd = random.Random(seed)
    theirs, ours, codec = connections(framing, version, False, compressed)
    theirs.codec_for_segments, ours.codec_for_segments = codec, codecs(framing)[compressed][1]
    after = [frame(version, i, payload(rnd.choice([0, 40, 2000]), rnd, True)) for i in range(n_after)]
    data = frame(version, 0, b"supported") + frame(version, 1, READY)
    data += segments(codec, after, rnd) if version >= 5 else b"".join(after)
    for chunk in chunks(data, rnd, small):
        ours.feed(chunk)
    theirs.feed(data)  # one read (see test_frames_delivered_are_the_drivers)
    assert ours.events == theirs.events and len(ours.frames()) == 2 + n_after
    assert ours._is_checksumming_enabled == (version >= 5)


def damage(data: bytes, rnd: random.Random, how: str) -> bytes:
    data = bytearray(data)
    if how == "flip":
        data[rnd.randrange(len(data))] ^= 1 << rnd.randrange(8)
    elif how == "truncate":
        data = data[:rnd.randrange(len(data))]
    elif how == "garbage":
        at = rnd.randrange(len(data))
        data[at:at] = rnd.randbytes(rnd.randrange(1, 40))
    return bytes(data)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), version=st.sampled_from([5, 4]), segmented=st.booleans(),
       compressed=st.booleans(), how=st.sampled_from(["flip", "truncate", "garbage"]), small=st.booleans())
def test_damaged_streams_fail_as_the_drivers(framing, seed, version, segmented, compressed, how, small):
    """Corrupted, truncated or garbled reads: the driver's error (if any) defuncts the connection,
    never an exception out of the read loop or a loop that does not end; the frames delivered
    are those the driver delivers (it may deliver some after its error, to the closed connection)."""
    rnd = random.Random(seed)
    segmented = segmented and version >= 5
    theirs, ours, data, _, _ = stream(framing, rnd, version, segmented, compressed, rnd.randrange(1, 6), False)
    data = damage(data, rnd, how)
    for chunk in chunks(data, rnd, small):
        ours.feed(chunk)
    theirs.feed(data)  # one read (see test_frames_delivered_are_the_drivers)
    expected = theirs.errors()[:1]
    if how == "truncate" and compressed and [e[1] for e in expected] == [struct.error]:
        # the driver counts a segment stored uncompressed 2 bytes short (see the README): a stream cut
        # within its last 2 bytes has it decode the segment before all of it is there
        expected = []
    assert ours.errors() == expected
    if ours.errors():
        assert ours.events[-1] == ours.errors()[0]  # nothing after the error
        assert ours.errors()[0][1] in (CrcMismatchException, ProtocolError)
    shorter, longer = sorted([ours.frames(), theirs.frames()], key=len)
    assert longer[:len(shorter)] == shorter  # the driver may hold back the last frames of a segment


@pytest.mark.parametrize("missing", [1, 2])
def test_a_compressed_stream_segment_stored_uncompressed_waits_for_its_last_bytes(framing, missing):
    """A small frame is stored uncompressed in a compressed stream; the read ends ``missing`` bytes
    short of its segment. The driver, which counts that segment 2 bytes short, decodes it already
    and defuncts on its truncated CRC-32; ours waits, and delivers the frame with the rest."""
    theirs, ours, codec = connections(framing, 5, True, True)
    data = segments(codec, [frame(5, 7, b"x")], random.Random(0))
    for conn in (theirs, ours):
        conn.feed(data[:-missing])
    assert [e[1] for e in theirs.errors()] == [struct.error]
    assert ours.events == []
    ours.feed(data[-missing:])
    assert ours.events == expected_events([frame(5, 7, b"x")])


@pytest.mark.parametrize("bad, message", [
    (bytes([0x87]) + bytes(8), "This version of the driver does not support protocol version 7"),
    (struct.pack(">BBhBi", 0x84, 0, 1, 8, -5), "Received negative body length: -5"),
])
@pytest.mark.parametrize("segmented", [False, True])
def test_bad_frames_defunct_with_the_drivers_protocol_error(framing, bad, message, segmented):
    version = 5 if segmented else 4
    theirs, ours, codec = connections(framing, version, segmented, False)
    good = frame(version, 3, b"ok")
    if segmented:
        out = io.BytesIO()
        codec._encode_segment(out, good + bad.replace(b"\x84", b"\x85", 1), True)
        data = out.getvalue()
    else:
        data = good + bad
    for conn in (theirs, ours):
        conn.feed(data)
    assert ours.errors() == theirs.errors()[:1] == [("defunct", ProtocolError, message)]
    assert len(ours.frames()) == 1


def test_each_frame_version_is_read_or_refused_as_by_the_driver(framing):
    """Which versions a frame may have is the installed driver's (``ProtocolVersion.SUPPORTED_VERSIONS``:
    1 to 6 and DSE's with cassandra-driver, 3 to 5 with scylla-driver)."""
    delivered = []
    for version in range(128):
        theirs, ours, _ = connections(framing, 4, False, False)
        data = frame(version, 3, b"body")
        for conn in (theirs, ours):
            conn.feed(data)
        assert ours.events == theirs.events, version
        if ours.frames():
            delivered.append(version)
    assert delivered == sorted(ProtocolVersion.SUPPORTED_VERSIONS)


def test_an_oversized_frame_waits_for_its_bytes(framing):
    """A length of 2 GiB - 1 is not an error: the driver waits for the bytes, and so does ours."""
    theirs, ours, _ = connections(framing, 4, False, False)
    head = struct.pack(">BBhBi", 0x84, 0, 1, 8, 2**31 - 1) + b"x" * 100
    for conn in (theirs, ours):
        conn.feed(head)
        conn.feed(b"y" * 5000)
    assert ours.events == theirs.events == []
    assert ours._iobuf.getvalue() == theirs._iobuf.getvalue() == head + b"y" * 5000


def test_many_reads_keep_no_memory(framing):
    """Thousands of reads through both kinds of loop: the memory they leave behind does not grow."""
    rnd = random.Random(7)
    _, plain, _ = connections(framing, 4, False, False)
    _, segs, codec = connections(framing, 5, True, False)
    v4 = b"".join(frame(4, i, payload(200, rnd, False)) for i in range(20))
    v5 = segments(codec, [frame(5, i, payload(200, rnd, False)) for i in range(20)], rnd)

    def rounds(n):
        for _ in range(n):
            for conn, data in ((plain, v4), (segs, v5)):
                for chunk in (data[:777], data[777:]):
                    conn.feed(chunk)
                conn.events.clear()

    rounds(200)
    gc.collect()
    tracemalloc.start()
    try:
        rounds(50)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        rounds(2000)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{grown} bytes kept after 2,000 rounds"


def test_a_delivered_body_is_owned_by_the_caller_only(framing):
    _, conn, _ = connections(framing, 5, True, False)
    out = io.BytesIO()
    conn.codec_for_segments._encode_segment(out, frame(5, 1, b"body bytes"), True)
    conn.feed(out.getvalue())
    body = conn.frames()[0][-1]
    conn.events.clear()
    import sys
    assert sys.getrefcount(body) == 2  # this name and getrefcount's argument: no buffer keeps it


def test_our_connection_classes_use_the_compiled_framing():
    from pyfactories import connection

    assert connection.framing.__name__ == "pyfactories.connection._framing"
    for cls in (connection.TimerQueueLibevConnection, connection.TimerQueueAsyncioConnection):
        assert cls.process_io_buffer is connection.framing.process_io_buffer
    assert type(connection.our_codec(drv.SegmentCodec())) is connection.framing.SegmentCodec
    other = type("Other", (drv.SegmentCodec,), {})()
    assert connection.our_codec(other) is other


def test_without_extensions_the_connection_reads_with_the_twin():
    import os
    import subprocess
    import sys

    code = ("from pyfactories import connection as c; "
            "print(c.framing.__name__, c.TimerQueueLibevConnection.process_io_buffer.__module__)")
    env = {**os.environ, "PYFACTORIES_NO_EXTENSIONS": "1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["pyfactories.connection._framing_py", "pyfactories.connection._framing_py"]


@pytest.mark.parametrize("big", [False, True])
def test_ours_takes_over_the_drivers_buffers_mid_stream(framing, big):
    """The driver's loop leaves a frame in its cql frame buffer (held back, or half of a large one);
    ours, reading on from there, delivers everything, once, in order."""
    theirs, ours, codec = connections(framing, 5, True, False)
    bodies = [b"a" * 30, b"b" * (2 * MAX if big else 40), b"c" * 50]
    frames_bytes = [frame(5, i, body) for i, body in enumerate(bodies)]
    out = io.BytesIO()
    if big:
        codec._encode_segment(out, frames_bytes[0], True)
        first_part = frames_bytes[1][:MAX]
        codec._encode_segment(out, first_part, False)
        cut = len(out.getvalue())
        for i in range(MAX, len(frames_bytes[1]), MAX):
            codec._encode_segment(out, frames_bytes[1][i:i + MAX], False)
    else:
        codec._encode_segment(out, frames_bytes[0] + frames_bytes[1], True)
        cut = len(out.getvalue()) + 8  # and the next segment's header: the driver holds frame 1 back
    codec._encode_segment(out, frames_bytes[2], True)
    data = out.getvalue()
    theirs.feed(data[:cut])
    assert len(theirs.frames()) == 1 and theirs._io_buffer.readable_cql_frame_bytes() > 0
    ours._io_buffer, theirs._io_buffer = theirs._io_buffer, None  # the same buffers, now read by ours
    ours._io_buffer._connection = ours
    ours.events = list(theirs.events)
    ours.feed(data[cut:])
    assert ours.events == expected_events(frames_bytes)
    assert ours._io_buffer.readable_cql_frame_bytes() == 0 and ours._iobuf.getvalue() == b""
