"""Protocol framing in C: the v5 segment codec's checksums, and the connection's read loop.

* :func:`crc24` / :func:`crc32`: the checksums of ``cassandra.segment`` (``compute_crc24``, the
  driver's polynomial and initial value, table-driven here instead of a bit loop per byte;
  ``compute_crc32``, zlib's CRC-32 by slicing-by-8).
* :class:`SegmentCodec`: the driver's ``SegmentCodec`` with those checksums; its bytes, segment
  headers and errors (``CrcException`` and its message) are the driver's.
* :func:`process_io_buffer`: the driver's ``Connection.process_io_buffer`` (v4 frames, and v5
  segments once checksumming is on), a method of :mod:`pyfactories.connection`'s classes.
  Its pure-Python twin is :mod:`pyfactories.connection._framing_py`, which documents the algorithm.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport int16_t, int32_t, int8_t, uint32_t, uint64_t
from libc.string cimport memcpy
from cpython.buffer cimport PyBUF_READ
from cpython.memoryview cimport PyMemoryView_FromMemory
from connection_fields cimport (
    get_continuous_paging_sessions, get_decompressor, get_lock, get_orphaned_request_ids, get_request_ids, get_requests,
    get_user_type_map, set_msg_received,
)
from as_imported cimport is_instance as _is_instance

from io import BytesIO
from zlib import crc32 as _zlib_crc32

from cassandra import DriverException, ProtocolVersion
from cassandra import segment as _segment
from cassandra.connection import Connection, CrcMismatchException, ProtocolError, _Frame

from pyfactories.connection._framing_py import SegmentCodec as _PySegmentCodec
from pyfactories.connection._framing_py import (
    HEADER_CRC_MISMATCH, NEGATIVE_BODY, PAYLOAD_CRC_MISMATCH, UNSUPPORTED_VERSION, as_bytes, codec_is_standard,
    defunct_with, keep, raise_short_read, switched,
)
from pyfactories.connection._framing_py import header_bytes as _py_header_bytes
from pyfactories.connection._framing_py import header_from as _py_header_from

include "_checksums.pxi"


cdef bytes _header(codec, payload_length, uncompressed_length, is_self_contained):
    """The header and its CRC-24, as ``SegmentCodec.encode_header`` writes them (same checks, the
    codec's attributes read in the twin's order, once)."""
    if payload_length > MAX_PAYLOAD:
        raise DriverException('Payload length exceed Segment.MAX_PAYLOAD_LENGTH')
    header_data = payload_length
    flag_offset = codec.FLAG_OFFSET
    cdef int n = 3
    if codec.compression:
        header_data |= uncompressed_length << flag_offset
        flag_offset += 17
        n = 5
    if is_self_contained:
        header_data |= 1 << flag_offset
    low_bits = header_data & (((<uint64_t>1) << (8 * n)) - 1)
    if type(low_bits) is not int or not (0 <= low_bits < ((<uint64_t>1) << (8 * n))):
        return _py_header_bytes(low_bits, n)  # an int subclass's operators gave something else: the twin's answer
    cdef uint64_t low = low_bits
    out = PyBytes_FromStringAndSize(NULL, n + 3)
    cdef char *p = PyBytes_AS_STRING(out)
    _put_le(p, low, n)
    _put_le(p + n, _crc24(low, n), 3)
    return out


cdef bytes _plain_segments(bytes msg):
    """``encode`` of an uncompressed codec: every segment (header, CRC-24, payload, CRC-32) in one ``bytes``."""
    cdef Py_ssize_t size = PyBytes_GET_SIZE(msg)
    cdef Py_ssize_t count = 1 if size <= MAX_PAYLOAD else (size + MAX_PAYLOAD - 1) // MAX_PAYLOAD
    cdef bint self_contained = count == 1
    out = PyBytes_FromStringAndSize(NULL, size + count * 10)
    cdef char *p = PyBytes_AS_STRING(out)
    cdef const unsigned char *src = <const unsigned char *>PyBytes_AS_STRING(msg)
    cdef Py_ssize_t start = 0, length
    cdef uint64_t header
    cdef Py_ssize_t i
    for i in range(count):
        length = min(MAX_PAYLOAD, size - start)
        header = <uint64_t>length | ((<uint64_t>1 << 17) if self_contained else 0)
        _put_le(p, header, 3)
        _put_le(p + 3, _crc24(header, 3), 3)
        memcpy(p + 6, src + start, length)
        _put_le(p + 6 + length, _checksum(src + start, length, CRC32_INITIAL), 4)
        p += 10 + length
        start += length
    return out


def encode_plain(bytes msg not None):
    """The segments an uncompressed :class:`SegmentCodec` writes for ``msg`` (``encode`` without a
    buffer); anything but ``bytes`` (``None`` too) is a ``TypeError``."""
    return _plain_segments(msg)


cdef inline bint _flag_at_17(codec) except -1:
    """Whether ``codec`` puts the self-contained flag where the compiled headers do (its
    ``FLAG_OFFSET`` is the protocol's 17: else its headers are the twin's)."""
    flag_offset = codec.FLAG_OFFSET
    return type(flag_offset) is int and flag_offset == 17


def plain_codec(codec):
    """Whether ``encode_plain`` writes what ``codec.encode`` writes for ``bytes``: this module's
    codec, uncompressed, with ``encode`` and the flag offset of its class."""
    return (type(codec) is SegmentCodec and not (codec.compressor and codec.decompressor)
            and "encode" not in codec.__dict__ and _flag_at_17(codec))


class SegmentCodec(_PySegmentCodec):
    """The driver's ``SegmentCodec`` with compiled checksums: the same bytes, headers, segments and
    errors (``decode`` and the compressed path are the twin's, whose CRC-32 is zlib's)."""

    def _header_bytes(self, payload_length, uncompressed_length, is_self_contained):
        return _header(self, payload_length, uncompressed_length, is_self_contained)

    def encode(self, buffer, msg):
        if type(msg) is bytes and not self.compression and _flag_at_17(self):
            buffer.write(_plain_segments(msg))
        else:
            _PySegmentCodec.encode(self, buffer, msg)

    def decode_header(self, buffer):
        cdef int n = 5 if self.compression else 3
        data = buffer.read(n + 3)
        if type(data) is not bytes:
            return _py_header_from(data, n)  # another object (a subclass's len may lie): the twin's
        if PyBytes_GET_SIZE(data) < n + 3:
            raise_short_read(1)  # raises the driver's error
        cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(data)
        cdef uint64_t header = _le(p, n)
        cdef uint32_t expected = <uint32_t>_le(p + n, 3)
        cdef uint32_t actual = _crc24(header, n)
        if actual != expected:
            raise _CrcException(HEADER_CRC_MISMATCH.format(header, expected, actual))
        cdef Py_ssize_t payload_length, uncompressed_length
        payload_length = header & MAX_PAYLOAD
        header >>= 17
        if n == 5:
            uncompressed_length = header & MAX_PAYLOAD
            header >>= 17
        else:
            uncompressed_length = -1
        return _SegmentHeader(payload_length, uncompressed_length, (header & 1) == 1)


# --- the read loop -------------------------------------------------------------------------------

cdef int _frame_in(object conn, bytes buf, Py_ssize_t start, Py_ssize_t stop,
                   Py_ssize_t *end) except -2:
    """Deliver the frame at ``buf[start:stop]`` if it is complete (1, ``end`` set past it), say it is
    not yet (0), or defunct the connection with the driver's ``ProtocolError`` (-1)."""
    cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(buf) + start
    cdef Py_ssize_t avail = stop - start
    cdef int version, flags, op, header_size
    cdef int stream
    cdef int32_t body
    if avail <= 0:
        return 0
    version = p[0] & 0x7F
    if not SUPPORTED[version]:
        defunct_with(conn, ProtocolError(UNSUPPORTED_VERSION % version))
        return -1
    header_size = 9 if version >= 3 else 8
    if avail < header_size:
        return 0
    flags = p[1]
    if version >= 3:
        stream = <int16_t>((p[2] << 8) | p[3])
        op = p[4]
        p += 5
    else:
        stream = <int8_t>p[2]
        op = p[3]
        p += 4
    body = <int32_t>((<uint32_t>p[0] << 24) | (<uint32_t>p[1] << 16) | (<uint32_t>p[2] << 8) | p[3])
    if body < 0:
        defunct_with(conn, ProtocolError(NEGATIVE_BODY % body))
        return -1
    if avail - header_size < body:
        return 0
    end[0] = start + header_size + body
    payload = PyBytes_FromStringAndSize(PyBytes_AS_STRING(buf) + start + header_size, body)
    if _ours_dispatch(conn):
        _dispatch(conn, stream, version, flags, op, payload, None, header_size, header_size + body)
    else:
        conn.process_msg(_Frame(version, flags, stream, op, header_size, header_size + body), payload)
    return 1


def process_io_buffer(self):
    """The driver's ``Connection.process_io_buffer``: deliver every complete frame in what was read
    to ``process_msg(frame, body)`` (a ``cassandra.connection._Frame``, the body ``bytes``), keep
    the rest for the next read; a bad frame or segment defuncts the connection with the driver's
    error. Segments are decoded with :class:`SegmentCodec`'s checksums, as many as complete."""
    while _process(self):
        pass


cdef bint _process(conn) except -1:
    """One pass; true when the connection switched to segments under it (the handshake's last
    frame), so the rest must be read again as segments."""
    if conn._current_frame is not None:
        conn._current_frame = None  # headers are read from the bytes each time
    buffers = conn._io_buffer
    raw = buffers._io_buffer
    data = raw.getvalue()
    if type(data) is not bytes:
        data = as_bytes(data)
    if conn._is_checksumming_enabled:
        codec = conn._segment_codec
        if not (_flag_at_17(codec) if type(codec) is SegmentCodec else codec_is_standard(codec)):
            _driver_process_io_buffer(conn)
            return False
        _segments(conn, buffers, raw, data, codec)
        return False
    cdef Py_ssize_t pos = 0, end = 0, size = PyBytes_GET_SIZE(data)
    cdef bint may_switch = ProtocolVersion.has_checksumming_support(conn.protocol_version)
    cdef int got
    while True:
        got = _frame_in(conn, data, pos, size, &end) if not may_switch else _peek(conn, data, pos, size, raw, &end)
        if got != 1:
            if pos:
                keep(buffers, "_io_buffer", data, pos)
            return False
        pos = end
        if may_switch and switched(conn, buffers, raw):
            return True


cdef int _peek(conn, bytes data, Py_ssize_t pos, Py_ssize_t size, raw, Py_ssize_t *end) except -2:
    """:func:`_frame_in` where the frame may switch the connection to segments: the io buffer's
    position is first set past the frame (of any supported version), where the driver's would be
    when it switches."""
    cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(data) + pos
    cdef Py_ssize_t avail = size - pos
    cdef int32_t body
    cdef int header_size
    if avail > 0 and SUPPORTED[p[0] & 0x7F]:
        header_size = 9 if (p[0] & 0x7F) >= 3 else 8
        if avail >= header_size:
            p += header_size - 4
            body = <int32_t>((<uint32_t>p[0] << 24) | (<uint32_t>p[1] << 16) | (<uint32_t>p[2] << 8) | p[3])
            if 0 <= body <= avail - header_size:
                raw.seek(pos + header_size + body)
    return _frame_in(conn, data, pos, size, end)


cdef Py_ssize_t _need(const unsigned char *p, Py_ssize_t avail) noexcept:
    """The whole length of the frame whose first ``avail`` bytes are at ``p``; -1 when its header
    is incomplete or one :func:`_frame_in` reports."""
    cdef int32_t body
    if avail < 9 or not SUPPORTED[p[0] & 0x7F] or (p[0] & 0x7F) < 3:
        return -1
    body = <int32_t>((<uint32_t>p[5] << 24) | (<uint32_t>p[6] << 16) | (<uint32_t>p[7] << 8) | p[8])
    return -1 if body < 0 else 9 + <Py_ssize_t>body


cdef _segments(conn, buffers, raw, bytes data, codec):
    """The v5 loop: segments in order, each checked, their payloads joined to the pending frame
    bytes, every complete frame delivered; the first bad segment or frame defuncts the connection.

    A frame larger than a read waits in ``parts`` (after the cql frame buffer's bytes when
    ``from_cql``) until all ``need`` bytes are there, so its bytes are joined once, not once a
    segment."""
    cdef bint compression = bool(codec.compression)
    cdef int hlen = 5 if compression else 3
    cdef Py_ssize_t size = PyBytes_GET_SIZE(data), pos = 0, fpos = 0, end = 0, plen, ulen, start
    cdef Py_ssize_t need = -1, waiting = 0
    cdef const unsigned char *p
    cdef uint64_t header
    cdef uint32_t expected, actual
    cdef int got
    cql = buffers._cql_frame_buffer
    cdef Py_ssize_t had = 0
    cdef bint from_cql = False, changed = False
    parts = None
    frames = b""
    if type(cql) is BytesIO:  # the driver's: its size and first bytes read without copying it
        view = cql.getbuffer()
        try:
            had = len(view)
            head = bytes(view[:9])
        finally:
            view.release()
        if had:
            need = _need(<const unsigned char *>PyBytes_AS_STRING(head), PyBytes_GET_SIZE(head))
            if need > had and cql.tell() == had:  # later reads are appended at its end
                from_cql, parts, waiting = True, [], had
            else:
                frames = as_bytes(cql.getvalue())
    else:  # another object: what it holds, as the twin reads it
        frames = as_bytes(cql.getvalue())
        had = PyBytes_GET_SIZE(frames)
    while True:
        if parts is None:
            while True:  # frames already whole
                got = _frame_in(conn, frames, fpos, PyBytes_GET_SIZE(frames), &end)
                if got < 0:
                    return
                if got == 0:
                    break
                fpos = end
                changed = True
            need = _need(<const unsigned char *>PyBytes_AS_STRING(frames) + fpos, PyBytes_GET_SIZE(frames) - fpos)
            if need > 0:  # a frame that is not whole yet: wait for all of it
                parts, waiting = [frames[fpos:]], PyBytes_GET_SIZE(frames) - fpos
                frames, fpos = b"", 0
        if size - pos < hlen + 3:
            break
        p = <const unsigned char *>PyBytes_AS_STRING(data) + pos
        header = _le(p, hlen)
        expected = <uint32_t>_le(p + hlen, 3)
        actual = _crc24(header, hlen)
        if actual != expected:
            defunct_with(conn, CrcMismatchException(HEADER_CRC_MISMATCH.format(header, expected, actual), conn.endpoint))
            return
        plen = header & MAX_PAYLOAD
        ulen = (header >> 17) & MAX_PAYLOAD if compression else -1
        if size - pos < hlen + 3 + plen + 4:
            break
        start = pos + hlen + 3
        expected = _le32(p + hlen + 3 + plen)
        actual = _checksum(p + hlen + 3, plen, CRC32_INITIAL)
        if actual != expected:
            defunct_with(conn, CrcMismatchException(PAYLOAD_CRC_MISMATCH.format(expected, actual), conn.endpoint))
            return
        pos = start + plen + 4
        changed = True
        if compression and ulen > 0:
            payload = codec.decompress(data[start:start + plen], ulen)
            if type(payload) is not bytes:
                payload = as_bytes(payload)
        elif parts is None and fpos == PyBytes_GET_SIZE(frames):
            fpos = _frames_in_place(conn, data, start, start + plen)
            if fpos < 0:
                return
            frames = data[fpos:start + plen]
            fpos = 0
            continue
        else:
            payload = data[start:start + plen]
        if parts is None:
            frames = frames[fpos:] + payload
            fpos = 0
            continue
        parts.append(payload)
        waiting += PyBytes_GET_SIZE(payload)
        if waiting >= need:
            frames = b"".join(([cql.getvalue()] if from_cql else []) + parts)
            fpos, parts, from_cql = 0, None, False
    if pos:
        keep(buffers, "_io_buffer", data, pos)
    if parts is not None:
        if from_cql and buffers._cql_frame_buffer is cql:
            for part in parts:  # appended: the bytes already there are not copied
                cql.write(part)
        elif from_cql:  # replaced meanwhile (by a decompressor): the pending bytes go in its place, as in the twin
            keep(buffers, "_cql_frame_buffer", b"".join([as_bytes(cql.getvalue())] + parts), 0)
        elif changed:  # (unchanged, the buffer is left as it is, its position too)
            keep(buffers, "_cql_frame_buffer", b"".join(parts), 0)
    elif changed and (had or fpos < PyBytes_GET_SIZE(frames)):
        keep(buffers, "_cql_frame_buffer", frames, fpos)


cdef Py_ssize_t _frames_in_place(conn, bytes data, Py_ssize_t start, Py_ssize_t stop) except -2:
    """Deliver the complete frames of one segment's payload ``data[start:stop]`` without copying
    it; return where the incomplete rest begins, or -1 after a protocol error."""
    cdef Py_ssize_t end = 0
    cdef int got
    while True:
        got = _frame_in(conn, data, start, stop, &end)
        if got < 0:
            return -1
        if got == 0:
            return start
        start = end


include "_dispatch.pxi"
