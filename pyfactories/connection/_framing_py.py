"""Protocol framing in pure Python: the twin of the compiled ``pyfactories.connection._framing``.

The driver reads a connection's bytes in ``Connection.process_io_buffer``: v4 frames straight
from the io buffer; with protocol v5, once the handshake is over, segments (a header with a
CRC-24, a payload with a CRC-32) whose payloads are joined in a second buffer and cut into
frames there. It does so one frame at a time, copying the rest of each buffer into a new
``BytesIO`` after every frame, and computes the CRC-24 bit by bit.

:func:`process_io_buffer` does the same work on one ``bytes`` snapshot per call: every segment
that is whole is checked in order, every frame that is whole is given to the driver's
``process_msg(frame, body)`` with the objects the driver builds (``cassandra.connection._Frame``,
the body as ``bytes``), and what is left stays in the driver's two buffers, where the driver's
own code would find it. Errors are the driver's: ``ProtocolError`` for a frame of an unknown
protocol version or a negative length, ``CrcMismatchException`` (with ``CrcException``'s
message) for a bad checksum, each given to ``connection.defunct``.

Deliberate differences, all where the driver's loop misbehaves: every whole frame is delivered at
once (the driver holds back the next frame of a segment while the following segment is
incomplete); a read that ends within a segment's first 6 bytes keeps them (the driver's loses
them, then fails the next segment's CRC); the first bad segment stops the call (the driver goes
on delivering frames already decoded to the defunct connection); a compressed codec waits for a
stored-uncompressed segment's last two bytes (the driver's ``SegmentHeader.segment_length``
counts its header two bytes short). A ``process_msg`` that raises (it catches ``Exception``
itself, so only a ``BaseException``) leaves the read's bytes in the buffer, delivered ones too.
"""

from __future__ import annotations

import logging
import struct
import zlib
from io import BytesIO
from typing import Any

from cassandra import DriverException, ProtocolVersion
from cassandra import segment as _segment
from cassandra.connection import Connection, CrcMismatchException, ProtocolError, _Frame
from cassandra.marshal import int8_unpack, uint32_le_unpack
from cassandra.protocol import ProtocolException

from .. import _support

HEADER_CRC_MISMATCH = 'CRC mismatch on header {:x}. Received {:x}", computed {:x}.'
PAYLOAD_CRC_MISMATCH = 'CRC mismatch on payload. Received {:x}", computed {:x}.'
UNSUPPORTED_VERSION = "This version of the driver does not support protocol version %d"
NEGATIVE_BODY = "Received negative body length: %r"

MAX_PAYLOAD = _segment.Segment.MAX_PAYLOAD_LENGTH
_FRAME_V3 = struct.Struct(">BhBi")
_FRAME_V1 = struct.Struct(">BbBi")
_SUPPORTED = frozenset(ProtocolVersion.SUPPORTED_VERSIONS)


def _crc24_table() -> list[int]:
    table = []
    for i in range(256):
        c = i << 16
        for _ in range(8):
            c <<= 1
            if c & 0x1000000:
                c ^= _segment.CRC24_POLY
        table.append(c & 0xFFFFFF)
    return table


_CRC24_TABLE = _crc24_table()


def crc24(data: int, length: int) -> int:
    """``cassandra.segment.compute_crc24``, a byte at a time from a table."""
    crc = _segment.CRC24_INIT
    for _ in range(length):
        crc = ((crc << 8) & 0xFFFFFF) ^ _CRC24_TABLE[((crc >> 16) ^ data) & 0xFF]
        data >>= 8
    return crc


def crc32(data: Any, value: int) -> int:
    return zlib.crc32(data, value)


def _header(codec: Any, payload_length: int, uncompressed_length: int, is_self_contained: Any) -> bytes:
    if payload_length > MAX_PAYLOAD:
        raise DriverException('Payload length exceed Segment.MAX_PAYLOAD_LENGTH')
    header_data = payload_length
    flag_offset = codec.FLAG_OFFSET
    n = 3
    if codec.compression:
        header_data |= uncompressed_length << flag_offset
        flag_offset += 17
        n = 5
    if is_self_contained:
        header_data |= 1 << flag_offset
    return header_bytes(header_data & ((1 << (8 * n)) - 1), n)


def header_bytes(low: Any, n: int) -> bytes:
    """A segment header's ``n`` bytes, ``low``, and their CRC-24 (``int.to_bytes``'s errors)."""
    return low.to_bytes(n, "little") + crc24(low, n).to_bytes(3, "little")


def as_bytes(data: Any) -> bytes:
    """``bytes(data)`` as a ``bytes`` itself (``bytes()`` can give a subclass, whose ``len`` may lie)."""
    data = bytes(data)
    return data if type(data) is bytes else memoryview(data).tobytes()


def raise_short_read(wanted: int) -> None:
    """Raise what the driver's ``read_uint_le`` raises on a buffer that ended early."""
    if wanted == 4:
        uint32_le_unpack(b"")
    int8_unpack(b"")


class SegmentCodec(_segment.SegmentCodec):
    """The driver's ``SegmentCodec`` with table-driven CRC-24: the same bytes, headers and errors."""

    def _header_bytes(self, payload_length, uncompressed_length, is_self_contained):
        return _header(self, payload_length, uncompressed_length, is_self_contained)

    def encode_header(self, buffer, payload_length, uncompressed_length, is_self_contained):
        buffer.write(self._header_bytes(payload_length, uncompressed_length, is_self_contained))

    def _encode_segment(self, buffer, payload, is_self_contained):
        uncompressed_length = len(payload)
        encoded = payload
        if self.compression:
            compressed = self.compress(payload)
            if len(compressed) >= uncompressed_length:
                uncompressed_length = 0
            else:
                encoded = compressed
        buffer.write(self._header_bytes(len(encoded), uncompressed_length, is_self_contained))
        buffer.write(encoded)
        buffer.write(crc32(encoded, _segment.CRC32_INITIAL).to_bytes(4, "little"))

    def decode_header(self, buffer):
        n = 5 if self.compression else 3
        return header_from(buffer.read(n + 3), n)

    def decode(self, buffer, header):
        encoded = buffer.read(header.payload_length)
        trailer = buffer.read(4)
        if len(trailer) != 4:
            raise_short_read(4)
        expected = uint32_le_unpack(trailer)
        actual = crc32(encoded, _segment.CRC32_INITIAL)
        if actual != expected:
            raise _segment.CrcException(PAYLOAD_CRC_MISMATCH.format(expected, actual))
        payload = encoded
        if self.compression and header.uncompressed_payload_length > 0:
            payload = self.decompress(encoded, header.uncompressed_payload_length)
        return _segment.Segment(payload, header.is_self_contained)


def header_from(data: Any, n: int) -> Any:
    """The ``SegmentHeader`` in the ``n + 3`` bytes read (``n``: the header's length), or the driver's
    errors: a short read, a CRC mismatch."""
    if len(data) < n + 3:
        raise_short_read(1)
    header = int.from_bytes(data[:n], "little")
    expected = int.from_bytes(data[n:n + 3], "little")
    actual = crc24(header, n)
    if actual != expected:
        raise _segment.CrcException(HEADER_CRC_MISMATCH.format(header, expected, actual))
    flags = header >> 17
    uncompressed_length = -1
    if n == 5:
        uncompressed_length = flags & MAX_PAYLOAD
        flags >>= 17
    return _segment.SegmentHeader(header & MAX_PAYLOAD, uncompressed_length, flags & 1 == 1)


def codec_is_standard(codec: Any) -> bool:
    """Whether ``codec`` frames as the driver's ``SegmentCodec`` does (else the driver's loop reads)."""
    return type(codec).__module__ in _CODEC_MODULES and codec.FLAG_OFFSET == 17 and isinstance(
        codec, _segment.SegmentCodec)


_CODEC_MODULES = frozenset({"cassandra.segment", __name__, "pyfactories.connection._framing"})
_driver_process_io_buffer = Connection.process_io_buffer


def defunct_with(conn: Any, exc: Exception) -> None:
    try:  # raised and caught, so the driver's log line carries the traceback as with its decorator
        raise exc
    except Exception as raised:
        conn.defunct(raised)


def _frame_in(conn: Any, buf: bytes, start: int, stop: int, raw: Any = None) -> int | None:
    """Deliver the frame at ``buf[start:stop]`` if it is whole and return where it ends; ``start``
    when it is not yet whole; None after defuncting the connection for a bad header.
    ``raw``: the io buffer to position past the frame first (a frame that may switch the
    connection to segments, where the driver's buffer would be then)."""
    avail = stop - start
    if avail <= 0:
        return start
    version = buf[start] & 0x7F
    if version not in _SUPPORTED:
        defunct_with(conn, ProtocolError(UNSUPPORTED_VERSION % version))
        return None
    header = _FRAME_V3 if version >= 3 else _FRAME_V1
    size = header.size + 1
    if avail < size:
        return start
    flags, stream, op, body = header.unpack_from(buf, start + 1)
    if body < 0:
        defunct_with(conn, ProtocolError(NEGATIVE_BODY % body))
        return None
    end = start + size + body
    if end > stop:
        return start
    if raw is not None:
        raw.seek(end)
    conn.process_msg(_Frame(version, flags, stream, op, size, size + body), buf[start + size:end])
    return end


def keep(buffers: Any, name: str, data: bytes, pos: int) -> None:
    """Leave ``data[pos:]`` in the driver's buffer ``name`` (position at its end), as its ``reset_*`` do."""
    fresh = BytesIO(data[pos:])
    fresh.seek(0, 2)
    setattr(buffers, name, fresh)


def switched(conn: Any, buffers: Any, raw: Any) -> bool:
    """Whether the frame just delivered turned segments on (the handshake's last frame): the
    driver has then re-based its buffers on the bytes after it, to be read again as segments."""
    return conn._is_checksumming_enabled or buffers._io_buffer is not raw


def process_io_buffer(self: Any) -> None:
    """The driver's ``Connection.process_io_buffer`` (see the module's docstring)."""
    while _process(self):
        pass


def _process(conn: Any) -> bool:
    """One pass; true when the connection switched to segments under it (the handshake's last
    frame), so the rest must be read again as segments."""
    if conn._current_frame is not None:
        conn._current_frame = None  # headers are read from the bytes each time
    buffers = conn._io_buffer
    raw = buffers._io_buffer
    data = as_bytes(raw.getvalue())
    if conn._is_checksumming_enabled:
        codec = conn._segment_codec
        if not codec_is_standard(codec):
            _driver_process_io_buffer(conn)
        else:
            _framing(conn, buffers, raw, data, codec)
        return False
    may_switch = ProtocolVersion.has_checksumming_support(conn.protocol_version)
    pos = 0
    while True:
        end = _frame_in(conn, data, pos, len(data), raw if may_switch else None)
        if end is None or end == pos:
            break
        pos = end
        if may_switch and switched(conn, buffers, raw):
            return True
    if pos:
        keep(buffers, "_io_buffer", data, pos)
    return False


def _framing(conn: Any, buffers: Any, raw: Any, data: bytes, codec: Any) -> None:
    """The v5 loop: segments in order, each checked, their payloads joined to the pending frame
    bytes, every whole frame delivered; the first bad segment or frame defuncts the connection."""
    hlen = 5 if codec.compression else 3
    frames = as_bytes(buffers._cql_frame_buffer.getvalue())
    had, changed = bool(frames), False
    pos = fpos = 0
    while True:
        while True:
            end = _frame_in(conn, frames, fpos, len(frames))
            if end is None:
                return
            if end == fpos:
                break
            fpos, changed = end, True
        if len(data) - pos < hlen + 3:
            break
        header = int.from_bytes(data[pos:pos + hlen], "little")
        expected = int.from_bytes(data[pos + hlen:pos + hlen + 3], "little")
        actual = crc24(header, hlen)
        if actual != expected:
            defunct_with(conn, CrcMismatchException(HEADER_CRC_MISMATCH.format(header, expected, actual), conn.endpoint))
            return
        plen = header & MAX_PAYLOAD
        start = pos + hlen + 3
        if len(data) - start < plen + 4:
            break
        payload = data[start:start + plen]
        expected = uint32_le_unpack(data[start + plen:start + plen + 4])
        actual = crc32(payload, _segment.CRC32_INITIAL)
        if actual != expected:
            defunct_with(conn, CrcMismatchException(PAYLOAD_CRC_MISMATCH.format(expected, actual), conn.endpoint))
            return
        pos = start + plen + 4
        uncompressed = (header >> 17) & MAX_PAYLOAD if hlen == 5 else 0
        if uncompressed > 0:
            payload = as_bytes(codec.decompress(payload, uncompressed))
        frames, fpos, changed = frames[fpos:] + payload, 0, True
    if pos:
        keep(buffers, "_io_buffer", data, pos)
    if changed and (had or fpos < len(frames)):
        keep(buffers, "_cql_frame_buffer", frames, fpos)


# --- dispatch --------------------------------------------------------------------------------------

log = logging.getLogger("cassandra.connection")  # the driver's logger: its messages, where users look
_driver_process_msg = Connection.process_msg
#: whether the driver's decoders take the connection's ``protocol_features`` (scylla-driver's do)
DECODE_FEATURES = _support.PROTOCOL_FEATURES


def process_msg(self: Any, header: Any, body: bytes) -> None:
    """The driver's ``Connection.process_msg`` for an answer to a request: pop the request's
    ``(callback, decoder, result_metadata)`` by stream id, decode the body, hand the response to
    the callback (the ``ResponseFuture``'s completion) and give the stream id back.

    The same steps, errors and log messages as the driver's, without its lock around the check for
    an orphaned stream id when the connection has none (a timed-out request's id). Anything less
    common goes to the driver's own ``process_msg``: server events (negative stream ids),
    continuous paging, orphaned ids, an id with no request (timed out and dropped). On a driver
    whose decoders take the connection's protocol features (:data:`DECODE_FEATURES`), they are given."""
    stream_id = header.stream
    if (stream_id < 0 or self._continuous_paging_sessions or self.orphaned_request_ids
            or stream_id not in self._requests):
        return _driver_process_msg(self, header, body)
    try:
        self.msg_received = True
        callback, decoder, result_metadata = self._requests.pop(stream_id)
        try:
            features = (self.features,) if DECODE_FEATURES else ()
            response = decoder(header.version, *features, self.user_type_map, stream_id, header.flags, header.opcode,
                               body, self.decompressor, result_metadata)
        except Exception as exc:
            log.exception("Error decoding response from Cassandra. %s; buffer: %r", header, self._iobuf.getvalue())
            if callback is not None:
                callback(exc)
            self.defunct(exc)
            return
        deliver(self, callback, response)
        give_back(self, stream_id)
    except Exception as exc:  # the driver's process_msg defuncts the connection on any error
        self.defunct(exc)


def deliver(conn: Any, callback: Any, response: Any) -> None:
    """Hand ``response`` to the request's callback; a protocol error defuncts the connection first
    (the driver's rule); a callback that raises is logged and ignored."""
    try:
        if isinstance(response, ProtocolException):
            if "unsupported protocol version" in response.message:
                conn.is_unsupported_proto_version = True
            else:
                log.error("Closing connection %s due to protocol error: %s", conn, response.summary_msg())
            conn.defunct(response)
        if callback is not None:
            callback(response)
    except Exception:
        log.exception("Callback handler errored, ignoring:")


def give_back(conn: Any, stream_id: int) -> None:
    """The stream id is free again, unless the callback made it a continuous paging session's."""
    sessions = conn._continuous_paging_sessions
    if stream_id in sessions:
        if sessions[stream_id].released:
            conn.remove_continuous_paging_session(stream_id)
    else:
        with conn.lock:
            conn.request_ids.append(stream_id)
