"""Bytes in: the compiled ``pyfactories.connection._framing`` (checksums, ``SegmentCodec``, the read loop
``process_io_buffer`` and ``process_msg``) against its twin ``pyfactories.connection._framing_py`` and the driver,
on malformed v4 frames and v5 segments (bad CRCs, lengths changed with their CRC still right,
negative and huge lengths, truncations, unknown versions, garbage), on connections whose buffers lie
(a position that is not the end, a ``tell`` or ``len`` that lies, other objects than ``BytesIO``),
and on callbacks that change the connection while it is read."""

from __future__ import annotations

import io
import random
import struct
import zlib

from cassandra import segment as drv
from cassandra.connection import Connection, _Frame
from cassandra.marshal import int32_pack
from cassandra.protocol import ProtocolHandler
from hypothesis import given
from hypothesis import strategies as st

from pyfactories.connection import _framing_py
from pyfactories.connection import _framing
from tests.fuzz.conftest import fuzz

MAX = drv.Segment.MAX_PAYLOAD_LENGTH


def outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as exc:
        return ("error", type(exc))


class LyingInt(int):
    """An int whose comparisons and bit operations say what it is told to."""

    def __lt__(self, other):
        return True

    def __le__(self, other):
        return True

    def __gt__(self, other):
        return False

    def __ge__(self, other):
        return True

    def __and__(self, other):
        return 2**50 + int(self)

    def __or__(self, other):
        return LyingInt(int(self) | int(other))


class LyingBytes(bytes):
    def __len__(self):
        return 7


ints = st.one_of(st.integers(-5, 20), st.integers(-2**70, 2**70), st.integers(0, 2**64))
odd_numbers = st.one_of(st.floats(allow_nan=True), st.booleans(), st.none(), st.just("3"),
                        st.integers(-10, 2**40).map(LyingInt))


# --- checksums -------------------------------------------------------------------------------------

@fuzz
@given(data=st.one_of(ints, odd_numbers), length=st.one_of(st.integers(-3, 40), odd_numbers.filter(
    lambda v: not (isinstance(v, int) and int(v) > 64))))
def test_frames_crc24_is_the_drivers(data, length):
    want = outcome(drv.compute_crc24, data, length)
    assert outcome(_framing.crc24, data, length) == want
    if type(data) is int and type(length) is int:
        assert outcome(_framing_py.crc24, data, length) == want


@fuzz
@given(data=st.one_of(st.binary(max_size=2000), st.builds(bytearray, st.binary(max_size=40)),
                      st.builds(memoryview, st.binary(max_size=40)), st.binary(max_size=40).map(LyingBytes),
                      st.text(max_size=5), st.none()),
       value=st.one_of(st.integers(0, 2**32 - 1), ints, odd_numbers))
def test_frames_crc32_is_zlibs(data, value):
    want = outcome(zlib.crc32, data, value)
    assert outcome(_framing.crc32, data, value) == want
    assert outcome(_framing_py.crc32, data, value) == want


# --- the codec -------------------------------------------------------------------------------------

def _compress(data: bytes) -> bytes:
    return int32_pack(len(data)) + zlib.compress(bytes(data), 1)


def _decompress(data: bytes) -> bytes:
    return zlib.decompress(data[4:])


def codec(module, compressed: bool):
    return module.SegmentCodec(_compress, _decompress) if compressed else module.SegmentCodec()


@fuzz
@given(payload_length=st.one_of(ints, st.integers(MAX - 2, MAX + 2), odd_numbers),
       uncompressed=st.one_of(ints, odd_numbers), self_contained=st.one_of(st.booleans(), ints, odd_numbers),
       compressed=st.booleans())
def test_frames_encode_header_is_the_twins(payload_length, uncompressed, self_contained, compressed):
    runs = []
    for module in (_framing_py, _framing):
        out = io.BytesIO()
        runs.append((outcome(codec(module, compressed).encode_header, out, payload_length, uncompressed,
                             self_contained), out.getvalue()))
    assert runs[1] == runs[0]
    if all(type(v) in (int, bool) for v in (payload_length, uncompressed, self_contained)) and runs[0][0][0] == "ok":
        out = io.BytesIO()
        codec(drv, compressed).encode_header(out, payload_length, uncompressed, self_contained)
        if 0 <= payload_length and (not compressed or 0 <= uncompressed < 2**17):
            assert out.getvalue() == runs[1][1]


class Reads:
    def __init__(self, value):
        self.value = value

    def read(self, n):
        return self.value


def _header_bytes(rnd: random.Random, compressed: bool) -> bytes:
    out = io.BytesIO()
    drv_codec = codec(drv, compressed)
    drv_codec._encode_segment(out, rnd.randbytes(rnd.randrange(0, 300)), rnd.random() < 0.5)
    return out.getvalue()[:8 if compressed else 6]


@fuzz
@given(seed=st.integers(0, 2**32), compressed=st.booleans(),
       how=st.sampled_from(["good", "flip", "short", "long", "bytearray", "memoryview", "lying", "int", "none",
                            "text", "list"]))
def test_frames_decode_header_is_the_twins(seed, compressed, how):
    rnd = random.Random(seed)
    data = _header_bytes(rnd, compressed)
    value = {"good": data, "flip": bytes(b ^ (1 << rnd.randrange(8)) if i == rnd.randrange(len(data)) else b
                                         for i, b in enumerate(data)),
             "short": data[:rnd.randrange(len(data))], "long": data + rnd.randbytes(rnd.randrange(1, 9)),
             "bytearray": bytearray(data), "memoryview": memoryview(data), "lying": LyingBytes(data[:rnd.randrange(9)]),
             "int": rnd.randrange(0, 20), "none": None, "text": "abcdefgh", "list": list(data)}[how]

    def decode(module):
        return vars(codec(module, compressed).decode_header(Reads(value)))

    got, want = outcome(decode, _framing), outcome(decode, _framing_py)
    assert got == want
    if type(value) is bytes:
        assert got == outcome(lambda: vars(codec(drv, compressed).decode_header(io.BytesIO(value))))


@fuzz
@given(size=st.sampled_from([0, 1, 100, MAX - 1, MAX, MAX + 1]) | st.integers(0, 3000), seed=st.integers(0, 2**32),
       compressed=st.booleans(), kind=st.sampled_from(["bytes", "bytearray", "memoryview", "lying"]),
       damage=st.sampled_from(["none", "flip", "truncate", "length"]))
def test_frames_segment_codec_encode_and_decode_are_the_twins(size, seed, compressed, kind, damage):
    rnd = random.Random(seed)
    raw = rnd.randbytes(size) if seed % 2 else b"row " * (size // 4)
    msg = {"bytes": raw, "bytearray": bytearray(raw), "memoryview": memoryview(raw), "lying": LyingBytes(raw)}[kind]
    outs = []
    for module in (_framing_py, _framing):
        out = io.BytesIO()
        outs.append((outcome(codec(module, compressed).encode, out, msg), out.getvalue()))
    assert outs[1] == outs[0]
    if kind != "lying":
        out = io.BytesIO()
        codec(drv, compressed).encode(out, msg)
        assert out.getvalue() == outs[1][1]
    data = bytearray(outs[0][1])
    if data and damage == "flip":
        data[rnd.randrange(len(data))] ^= 1 << rnd.randrange(8)
    elif damage == "truncate":
        data = data[:rnd.randrange(len(data) + 1)]
    elif damage == "length" and len(data) >= 6 and not compressed:  # a payload length changed, its CRC-24 right
        header = rnd.randrange(0, 1 << 24)
        data[:6] = header.to_bytes(3, "little") + drv.compute_crc24(header, 3).to_bytes(3, "little")
    data = bytes(data)

    def decode(module):
        buf = io.BytesIO(data)
        c = codec(module, compressed)
        segments = []
        while buf.tell() < len(data):
            header = c.decode_header(buf)
            segment = c.decode(buf, header)
            segments.append((vars(header), segment.payload, segment.is_self_contained))
        return segments

    assert outcome(decode, _framing) == outcome(decode, _framing_py)


# --- the read loop ---------------------------------------------------------------------------------

class Recorder(Connection):
    """A driver ``Connection`` without a socket that records what its read loop delivers, and whose
    ``process_msg`` may change the connection (``tricks``: frame index -> what to do)."""

    def __init__(self, protocol_version, codec=None, tricks=None):
        super().__init__("127.0.0.1", protocol_version=protocol_version)
        self.events = []
        self.tricks = tricks or {}
        if codec is not None:
            self._io_buffer.set_checksumming_buffer()
            self._is_checksumming_enabled = True
            self._segment_codec = codec

    def process_msg(self, header, body):
        self.events.append(("frame", header.version, header.flags, header.stream, header.opcode,
                            header.body_offset, header.end_pos, type(body), body))
        trick = self.tricks.get(len(self.events))
        if trick == "write-more":
            self._iobuf.write(b"\x84\x00\x00\x01\x08\x00\x00\x00\x02ok")
        elif trick == "new-cql-buffer" and self._io_buffer._cql_frame_buffer is not None:
            self._io_buffer._cql_frame_buffer = io.BytesIO(b"\x85\x00\x00\x09\x08\x00\x00\x00\x03abc")
        elif trick == "switch":
            if not self._is_checksumming_enabled:
                self._enable_checksumming()
        elif trick == "new-io-buffer":
            self._io_buffer._io_buffer = io.BytesIO(b"\x84")
        elif trick == "raise":
            raise ValueError("from process_msg")

    def defunct(self, exc):
        if not self.is_defunct:
            self.is_defunct = True
            self.events.append(("defunct", type(exc), str(exc)))


class LyingBuffer(io.BytesIO):
    """A cql frame buffer whose ``tell`` lies, or whose ``getvalue`` gives a ``bytes`` whose ``len`` lies."""

    def __init__(self, data, told=None, lying_value=False):
        super().__init__(data)
        self.seek(0, 2)
        self.told, self.lying_value = told, lying_value

    def tell(self):
        return super().tell() if self.told is None else self.told

    def getvalue(self):
        value = super().getvalue()
        return LyingBytes(value) if self.lying_value else value


class OddDecompress:
    """A compressed codec's decompressor that answers in another type than ``bytes``."""

    def __init__(self, how):
        self.how = how
        self.conn = None

    def __call__(self, data):
        out = _decompress(data)
        if self.how == "replace-cql" and self.conn is not None:  # the connection changed while it is read
            self.conn._io_buffer._cql_frame_buffer = io.BytesIO(b"\x85replaced")
            self.conn._iobuf.write(b"\x00")
        return {"bytearray": bytearray(out), "lying": LyingBytes(out), "memoryview": memoryview(out),
                "text": "not bytes", "bytes": out, "replace-cql": out}[self.how]


def frame(version, stream, body, opcode=8, flags=0, length=None):
    length = len(body) if length is None else length
    if version >= 3:
        return struct.pack(">BBhBi", version | 0x80, flags, stream, opcode, length) + body
    return struct.pack(">BBbBi", version | 0x80, flags, stream, opcode, length) + body


def segments(codec_, frames_bytes, rnd):
    out = io.BytesIO()
    batch = b""
    for f in frames_bytes + [None]:
        if f is not None and len(batch) + len(f) <= MAX and rnd.random() < 0.6:
            batch += f
            continue
        if batch:
            codec_._encode_segment(out, batch, True)
        batch = b""
        if f is None:
            break
        if len(f) <= MAX and rnd.random() < 0.7:
            batch = f
        else:  # cut across segments that are not self-contained
            step = rnd.choice([1, 7, 100, MAX])
            for i in range(0, len(f), step):
                codec_._encode_segment(out, f[i:i + step], False)
    return out.getvalue()


def damaged(data: bytes, rnd: random.Random, how: str, segmented: bool) -> bytes:
    data = bytearray(data)
    if not data:
        return bytes(data)
    if how == "flip":
        for _ in range(rnd.randrange(1, 3)):
            data[rnd.randrange(len(data))] ^= 1 << rnd.randrange(8)
    elif how == "truncate":
        data = data[:rnd.randrange(len(data))]
    elif how == "garbage":
        at = rnd.randrange(len(data) + 1)
        data[at:at] = rnd.randbytes(rnd.randrange(1, 30))
    elif how == "segment-length" and segmented and len(data) >= 6:  # a changed length whose CRC-24 is right
        header = int.from_bytes(data[:3], "little") & ~MAX | rnd.choice([0, 1, 5, MAX, rnd.randrange(MAX)])
        data[:6] = header.to_bytes(3, "little") + drv.compute_crc24(header, 3).to_bytes(3, "little")
    return bytes(data)


def frames_of(rnd: random.Random, version: int, n: int, how: str) -> list[bytes]:
    out = []
    for i in range(n):
        body = rnd.randbytes(rnd.choice([0, 1, 9, 60, 600]))
        fversion, length = version, None
        if how == "bad-version" and rnd.random() < 0.4:
            fversion = rnd.choice([0, 7, 0x41, 0x42, 100, 127, 1, 2])
        elif how == "frame-length" and rnd.random() < 0.4:
            length = rnd.choice([-1, -2**31, 2**31 - 1, len(body) + 5, max(0, len(body) - 3), 0])
        out.append(frame(fversion, rnd.randrange(-2, 40), body, rnd.randrange(256), rnd.randrange(256), length))
    return out


def chunks(data: bytes, rnd: random.Random) -> list[bytes]:
    out, i = [], 0
    while i < len(data):
        n = rnd.choice([1, 2, 5, 9, 13, 64, 700, 70000])
        out.append(data[i:i + n])
        i += n
    return out or [b""]


def state(conn) -> tuple:
    buffers = conn._io_buffer
    cql = buffers._cql_frame_buffer
    return (conn.events, conn.is_defunct, conn._is_checksumming_enabled, bytes(buffers._io_buffer.getvalue()),
            None if cql is None else (bytes(cql.getvalue()), cql.tell()))


@fuzz
@given(seed=st.integers(0, 2**32), version=st.sampled_from([5, 5, 4, 3]), segmented=st.booleans(),
       compressed=st.booleans(), n=st.integers(1, 6),
       how=st.sampled_from(["none", "flip", "truncate", "garbage", "segment-length", "bad-version", "frame-length"]),
       pending=st.sampled_from(["none", "at-end", "seeked", "lying-tell", "lying-value", "big-frame-start"]),
       decompress=st.sampled_from(["bytes", "bytes", "bytearray", "lying", "memoryview", "text", "replace-cql"]),
       tricks=st.dictionaries(st.integers(1, 6), st.sampled_from(["write-more", "new-cql-buffer", "switch",
                                                                  "new-io-buffer", "raise"]), max_size=2),
       lying_io=st.booleans())
def test_frames_read_loop_is_the_twins(seed, version, segmented, compressed, n, how, pending, decompress, tricks,
                                       lying_io):
    rnd = random.Random(seed)
    segmented = segmented and version >= 5
    drv_codec = codec(drv, compressed)
    frames_bytes = frames_of(rnd, version, n, how)
    data = segments(drv_codec, frames_bytes, rnd) if segmented else b"".join(frames_bytes)
    data = damaged(data, rnd, how, segmented)
    cuts = chunks(data, rnd)
    start = rnd.randbytes(rnd.randrange(0, 20))
    if pending == "big-frame-start":
        start = frame(5, 1, b"", length=rnd.choice([30, 300, 2 * MAX]))[:rnd.choice([9, 12])]
    seek_to, told = rnd.randrange(len(start) + 1), rnd.choice([0, 3, 9, 10**6])
    runs = []
    for module in (_framing_py, _framing):
        decompressor = OddDecompress(decompress)
        ours = module.SegmentCodec(_compress, decompressor) if compressed else module.SegmentCodec()
        conn = type("C", (Recorder,), {"process_io_buffer": module.process_io_buffer})(
            version, ours if segmented else None, tricks)
        decompressor.conn = conn
        if lying_io:  # an io buffer whose getvalue gives a bytes whose len lies
            conn._io_buffer._io_buffer = LyingBuffer(b"", lying_value=True)
        if segmented and pending != "none":
            if pending in ("lying-tell", "lying-value"):
                cql = LyingBuffer(start, told=told if pending == "lying-tell" else None,
                                  lying_value=pending == "lying-value")
            else:
                cql = io.BytesIO(start)
                cql.seek(seek_to if pending == "seeked" else len(start))
            conn._io_buffer._cql_frame_buffer = cql
        got = []
        for chunk in cuts:
            if conn.is_defunct:
                break
            conn._iobuf.write(chunk)
            got.append((outcome(conn.process_io_buffer), state(conn)))
        runs.append(got)
    assert runs[1] == runs[0]


# --- dispatch --------------------------------------------------------------------------------------

VOID = b"\x00\x00\x00\x01"


class Requests(dict):
    pass


class Dispatching(Connection):
    def __init__(self):
        super().__init__("127.0.0.1", protocol_version=4)
        self.events = []

    def defunct(self, exc):
        self.events.append(("defunct", type(exc).__name__))
        self.is_defunct = True


field_values = st.one_of(st.integers(-3, 40), st.integers(-2**40, 2**40), st.sampled_from([3.0, True, None, "3"]))


@fuzz
@given(stream=st.one_of(st.just(3), field_values), version=st.one_of(st.just(4), field_values),
       flags=st.one_of(st.just(0), field_values), opcode=st.one_of(st.just(8), field_values),
       body=st.sampled_from([VOID, bytearray(VOID), LyingBytes(VOID), b"\x00", "text"]),
       requests=st.sampled_from(["dict", "subclass"]),
       entry=st.sampled_from(["ok", "none", "short", "raising-decoder", "raising-callback", "absent"]),
       orphaned=st.booleans())
def test_frames_process_msg_is_the_twins(stream, version, flags, opcode, body, requests, entry, orphaned):
    runs = []
    for process_msg in (_framing_py.process_msg, _framing.process_msg):
        conn = type("C", (Dispatching,), {"process_msg": process_msg})()
        conn._requests = Requests() if requests == "subclass" else {}
        conn.request_ids.remove(3)
        if orphaned:
            conn.orphaned_request_ids.add(7)

        def callback(response, conn=conn):
            conn.events.append(("callback", type(response).__name__))
            if entry == "raising-callback":
                raise RuntimeError("callback")

        def decoder(*args):
            raise ValueError("decoder")

        value = {"ok": (callback, ProtocolHandler.decode_message, None), "none": None, "short": (callback,),
                 "raising-decoder": (callback, decoder, None), "raising-callback": (callback, ProtocolHandler.decode_message, None)}
        if entry != "absent":
            conn._requests[3] = value[entry]
        try:
            conn.process_msg(_Frame(version, flags, stream, opcode, 9, 13), body)
            raised = None
        except Exception as exc:
            raised = type(exc)
        runs.append((raised, conn.events, sorted(conn._requests), 3 in conn.request_ids, conn.msg_received,
                     sorted(conn.orphaned_request_ids)))
    assert runs[1] == runs[0]
