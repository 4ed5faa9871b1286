# cython: language_level=3
"""Requests encoded for the connection, in C: :func:`send_msg` and :func:`encode_message` of
:mod:`pyfactories._encoding` (their pure-Python twin, which documents what is encoded here and what
is left to the driver). The frame is written into one ``bytes`` object, sized first; with protocol
v5 and our uncompressed segment codec, the segments are written by ``pyfactories._segments``
straight from it."""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from cpython.unicode cimport PyUnicode_AsUTF8String
from libc.stdint cimport uint32_t
from libc.string cimport memcpy

import io

from cassandra.connection import ConnectionBusy, ConnectionShutdown
from cassandra.protocol import ExecuteMessage, ProtocolHandler, QueryMessage, _UNSET_VALUE

from pyfactories._encoding import ENCODE_OURS as _ENCODE_OURS
from pyfactories._encoding import plain_encoder as _plain_encoder_py
from pyfactories._segments import SegmentCodec as _OurCodec
from pyfactories._segments import encode_plain as _encode_plain

cdef bint ENCODE_OURS = _ENCODE_OURS
cdef object _DRIVER_ENCODE = ProtocolHandler.encode_message.__func__
cdef object _EXECUTE = ExecuteMessage, _QUERY = QueryMessage, _UNSET = _UNSET_VALUE
cdef dict _plain_handlers = {}  # handler class -> whether its encode_message is the driver's

cdef enum:
    _TRACING = 0x02
    _USE_BETA = 0x10
    _VALUES = 0x01
    _PAGE_SIZE = 0x04
    _PAGING_STATE = 0x08
    _SERIAL = 0x10
    _TIMESTAMP = 0x20
    _KEYSPACE = 0x80


cdef inline bint _plain_encoder(encoder) except -1:
    if not ENCODE_OURS or getattr(encoder, "__func__", None) is not _DRIVER_ENCODE:
        return False
    handler = getattr(encoder, "__self__", None)
    found = _plain_handlers.get(handler)
    if found is None:
        found = _plain_handlers[handler] = _plain_encoder_py(encoder)
    return found


cdef inline char *_short(char *p, unsigned int v) noexcept:
    p[0] = <char>(v >> 8)
    p[1] = <char>v
    return p + 2


cdef inline char *_int(char *p, uint32_t v) noexcept:
    p[0] = <char>(v >> 24)
    p[1] = <char>(v >> 16)
    p[2] = <char>(v >> 8)
    p[3] = <char>v
    return p + 4


cdef inline char *_bytes(char *p, bytes b) noexcept:
    cdef Py_ssize_t n = PyBytes_GET_SIZE(b)
    memcpy(p, PyBytes_AS_STRING(b), n)
    return p + n


cdef inline bint _u16(v, unsigned int *out) except -1:
    """``v`` as the driver's unsigned short (false: not an int in range, the driver's own error)."""
    if not isinstance(v, int) or v < 0 or v > 0xFFFF:
        return False
    out[0] = v
    return True


cdef inline bint _i32(v, long long *out) except -1:
    if not isinstance(v, int) or v < -2147483648 or v > 2147483647:
        return False
    out[0] = v
    return True


cdef inline bytes _utf8(s):
    """A string field as the driver writes it (``str`` in UTF-8, ``bytes`` as they are); None otherwise."""
    if type(s) is str:
        return PyUnicode_AsUTF8String(s)
    return s if type(s) is bytes else None


def encode_message(msg, stream_id, protocol_version, compressor, allow_beta_protocol_version):
    """:func:`pyfactories._encoding.encode_message`."""
    return _encode(msg, stream_id, protocol_version, compressor, allow_beta_protocol_version)


cdef object _encode(msg, stream_id, protocol_version, compressor, allow_beta):
    kind = type(msg)
    cdef bint execute = kind is _EXECUTE
    if not execute and kind is not _QUERY:
        return None
    if type(protocol_version) is not int or not (3 <= protocol_version <= 5):
        return None
    cdef int version = protocol_version
    keyspace = msg.keyspace
    if (msg.custom_payload or msg.continuous_paging_options or (compressor and version < 5)
            or (keyspace is not None and version < 5)):
        return None
    cdef long long stream, fetch, count_i
    if not isinstance(stream_id, int) or stream_id < -32768 or stream_id > 32767:
        return None
    stream = stream_id
    # the fields, checked and sized
    cdef bytes first, second = None, ks = None, paging = None
    cdef Py_ssize_t size = 0
    if execute:
        first = msg.query_id if type(msg.query_id) is bytes else None
        if first is None or PyBytes_GET_SIZE(first) > 0xFFFF:
            return None
        size += 2 + PyBytes_GET_SIZE(first)
        if version >= 5:
            second = msg.result_metadata_id if type(msg.result_metadata_id) is bytes else None
            if second is None or PyBytes_GET_SIZE(second) > 0xFFFF:
                return None
            size += 2 + PyBytes_GET_SIZE(second)
    else:
        first = _utf8(msg.query)
        if first is None:
            return None
        size += 4 + PyBytes_GET_SIZE(first)
    cdef unsigned int cl, serial_cl = 0
    if not _u16(msg.consistency_level, &cl):
        return None
    size += 2 + (4 if version >= 5 else 1)
    cdef uint32_t flags = 0
    params = msg.query_params
    cdef Py_ssize_t i, n = 0
    cdef bint as_list = type(params) is list
    if params is not None:
        if not as_list and type(params) is not tuple:
            return None
        flags |= _VALUES
        n = len(params)
        if n > 0xFFFF:
            return None
        size += 2
        for i in range(n):
            v = <object>(PyList_GET_ITEM(params, i) if as_list else PyTuple_GET_ITEM(params, i))
            if v is None or v is _UNSET:
                size += 4
            elif type(v) is bytes:
                size += 4 + PyBytes_GET_SIZE(<bytes>v)
            else:
                return None
    serial = msg.serial_consistency_level
    if serial:
        if not _u16(serial, &serial_cl):
            return None
        flags |= _SERIAL
        size += 2
    fetch_size = msg.fetch_size
    if fetch_size:
        if not _i32(fetch_size, &fetch):
            return None
        flags |= _PAGE_SIZE
        size += 4
    if msg.paging_state:
        if type(msg.paging_state) is not bytes:
            return None
        paging = msg.paging_state
        flags |= _PAGING_STATE
        size += 4 + PyBytes_GET_SIZE(paging)
    timestamp = msg.timestamp
    cdef unsigned long long ts = 0
    if timestamp is not None:  # the driver writes it unsigned (uint64_pack)
        if not isinstance(timestamp, int) or timestamp < 0 or timestamp > 18446744073709551615:
            return None
        ts = timestamp
        flags |= _TIMESTAMP
        size += 8
    if keyspace is not None:
        ks = _utf8(keyspace)
        if ks is None or PyBytes_GET_SIZE(ks) > 0xFFFF:
            return None
        flags |= _KEYSPACE
        size += 2 + PyBytes_GET_SIZE(ks)
    if size > 2147483647 - 9:
        return None
    # the frame
    cdef bytes out = PyBytes_FromStringAndSize(NULL, 9 + size)
    cdef char *p = PyBytes_AS_STRING(out)
    p[0] = <char>version
    p[1] = <char>((_TRACING if msg.tracing else 0) | (_USE_BETA if allow_beta else 0))
    p = _short(p + 2, <unsigned int>(stream & 0xFFFF))
    p[0] = <char>(0x0A if execute else 0x07)
    p = _int(p + 1, <uint32_t>size)
    if execute:
        p = _bytes(_short(p, <unsigned int>PyBytes_GET_SIZE(first)), first)
        if second is not None:
            p = _bytes(_short(p, <unsigned int>PyBytes_GET_SIZE(second)), second)
    else:
        p = _bytes(_int(p, <uint32_t>PyBytes_GET_SIZE(first)), first)
    p = _short(p, cl)
    if version >= 5:
        p = _int(p, flags)
    else:
        p[0] = <char>flags
        p += 1
    if params is not None:
        p = _short(p, <unsigned int>n)
        for i in range(n):
            v = <object>(PyList_GET_ITEM(params, i) if as_list else PyTuple_GET_ITEM(params, i))
            if v is None:
                p = _int(p, <uint32_t>0xFFFFFFFF)
            elif v is _UNSET:
                p = _int(p, <uint32_t>0xFFFFFFFE)
            else:
                p = _bytes(_int(p, <uint32_t>PyBytes_GET_SIZE(<bytes>v)), <bytes>v)
    if flags & _PAGE_SIZE:
        p = _int(p, <uint32_t>fetch)
    if paging is not None:
        p = _bytes(_int(p, <uint32_t>PyBytes_GET_SIZE(paging)), paging)
    if flags & _SERIAL:
        p = _short(p, serial_cl)
    if flags & _TIMESTAMP:
        p = _int(p, <uint32_t>(ts >> 32))
        p = _int(p, <uint32_t>(ts & 0xFFFFFFFF))
    if ks is not None:
        p = _bytes(_short(p, <unsigned int>PyBytes_GET_SIZE(ks)), ks)
    return out


def send_msg(self, msg, request_id, cb, encoder=ProtocolHandler.encode_message,
             decoder=ProtocolHandler.decode_message, result_metadata=None):
    """:func:`pyfactories._encoding.send_msg`."""
    if self.is_defunct:
        raise ConnectionShutdown("Connection to %s is defunct" % self.endpoint)
    elif self.is_closed:
        raise ConnectionShutdown("Connection to %s is closed" % self.endpoint)
    elif not self._socket_writable:
        raise ConnectionBusy("Connection %s is overloaded" % self.endpoint)
    self._requests[request_id] = (cb, decoder, result_metadata)
    data = None
    if _plain_encoder(encoder):
        data = _encode(msg, request_id, self.protocol_version, self.compressor, self.allow_beta_protocol_version)
    if data is None:
        data = encoder(msg, request_id, self.protocol_version, compressor=self.compressor,
                       allow_beta_protocol_version=self.allow_beta_protocol_version)
    if self._is_checksumming_enabled:
        codec = self._segment_codec
        # not (codec.compressor and codec.decompressor): the driver's ``compression`` property, not called
        if (type(codec) is _OurCodec and not (codec.compressor and codec.decompressor) and type(data) is bytes
                and "encode" not in codec.__dict__):  # a codec whose encode is replaced (timed) keeps it
            data = _encode_plain(data)
        else:
            buffer = io.BytesIO()
            codec.encode(buffer, data)
            data = buffer.getvalue()
    self.push(data)
    return len(data)
