# cython: language_level=3
"""Requests encoded for the connection, in C: :func:`send_msg` and :func:`encode_message` of
:mod:`pyfactories.connection._encoding_py` (their pure-Python twin, which documents what is encoded here and what
is left to the driver). The frame is written into one ``bytes`` object, sized first; with protocol
v5 and our uncompressed segment codec, the segments are written by ``pyfactories.connection._framing``
straight from it."""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_Size
from cpython.list cimport PyList_AsTuple
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from cpython.unicode cimport PyUnicode_AsUTF8String
from libc.stdint cimport uint32_t
from libc.string cimport memcpy

from connection_fields cimport (
    get_allow_beta_protocol_version, get_compressor, get_is_checksumming_enabled, get_is_closed, get_is_defunct,
    get_protocol_version, get_requests, get_socket_writable,
)

import io

from cassandra.connection import ConnectionBusy, ConnectionShutdown
from cassandra.protocol import ExecuteMessage, ProtocolHandler, QueryMessage, _UNSET_VALUE

from pyfactories.connection._encoding_py import CONTINUOUS_PAGING as _CONTINUOUS_PAGING
from pyfactories.connection._encoding_py import FEATURES as _FEATURES
from pyfactories.connection._encoding_py import LAST_ERROR as _LAST_ERROR
from pyfactories.connection._framing import encode_plain as _encode_plain
from pyfactories.connection._framing import plain_codec as _plain_codec

cdef bint FEATURES = _FEATURES
cdef bint CONTINUOUS_PAGING = _CONTINUOUS_PAGING
cdef bint LAST_ERROR = _LAST_ERROR
cdef object _DRIVER_ENCODE = ProtocolHandler.encode_message.__func__
cdef object _EXECUTE = ExecuteMessage, _QUERY = QueryMessage, _UNSET = _UNSET_VALUE
cdef object _WRITE_HEADER = ProtocolHandler._write_header
cdef Py_ssize_t MAX_BODY = 2147483647  # a frame's body length is a signed 32-bit int

cdef enum:
    _TRACING = 0x02
    _USE_BETA = 0x10
    _VALUES = 0x01
    _SKIP_METADATA = 0x02
    _PAGE_SIZE = 0x04
    _PAGING_STATE = 0x08
    _SERIAL = 0x10
    _TIMESTAMP = 0x20
    _KEYSPACE = 0x80


cdef inline bint _plain_encoder(encoder) except -1:
    """:func:`pyfactories.connection._encoding_py.plain_encoder`, asked every time (not cached: a handler class's
    ``_write_header`` can be replaced after its first request)."""
    if getattr(encoder, "__func__", None) is not _DRIVER_ENCODE:
        return False
    handler = getattr(encoder, "__self__", None)
    return handler is not None and handler._write_header is _WRITE_HEADER


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


cdef inline int _flag(v) except -2:
    """:func:`pyfactories.connection._encoding_py._flag`: 0 or 1 for ``None``, a ``bool`` or an ``int``; -1 otherwise."""
    if v is None or v is False:
        return 0
    if v is True:
        return 1
    if type(v) is int:
        return 1 if v else 0  # an int's truth runs no Python code
    return -1


cdef inline bytes _utf8(s):
    """:func:`pyfactories.connection._encoding_py._utf8`: a string field as the driver writes it, or None."""
    if type(s) is str:
        try:
            return PyUnicode_AsUTF8String(s)
        except UnicodeEncodeError:
            return None
    return <bytes>s if type(s) is bytes else None


def encode_message(msg, stream_id, protocol_version, compressor, allow_beta_protocol_version,
                   protocol_features=None):
    """:func:`pyfactories.connection._encoding_py.encode_message`."""
    return _encode(msg, stream_id, protocol_version, compressor, allow_beta_protocol_version, protocol_features)


cdef object _encode(msg, stream_id, protocol_version, compressor, allow_beta, features):
    """Every field is read once, in the twin's order, into a local of an exact type (the values into
    a tuple): after the reads no Python code runs, so what is sized is what is written."""
    kind = type(msg)
    cdef bint execute = kind is _EXECUTE
    if not execute and kind is not _QUERY:
        return None
    cdef int use_metadata_id = 0, tablets_v2 = 0
    if FEATURES and features is not None:
        use_metadata_id = _flag(features.use_metadata_id)
        tablets_v2 = _flag(features.tablets_routing_v2)
        if use_metadata_id < 0 or tablets_v2 < 0:
            return None
    if type(protocol_version) is not int or not (3 <= protocol_version <= 5):
        return None
    cdef int version = protocol_version
    if type(stream_id) is not int or not (-32768 <= stream_id <= 32767):
        return None
    cdef int stream = stream_id
    if compressor is not None and version < 5:
        return None
    cdef int beta = _flag(allow_beta)
    if beta < 0:
        return None
    custom_payload = msg.custom_payload
    if custom_payload is not None and not (type(custom_payload) is dict and PyDict_Size(custom_payload) == 0):
        return None
    if CONTINUOUS_PAGING and msg.continuous_paging_options is not None:
        return None
    cdef bytes first, second = None, ks = None, paging = None
    cdef Py_ssize_t size = 0
    keyspace = msg.keyspace
    if keyspace is not None:
        if version < 5:
            return None
        ks = _utf8(keyspace)
        if ks is None or PyBytes_GET_SIZE(ks) > 0xFFFF:
            return None
    if execute:
        query_id = msg.query_id
        if type(query_id) is not bytes or PyBytes_GET_SIZE(query_id) > 0xFFFF:
            return None
        first = <bytes>query_id
        size += 2 + PyBytes_GET_SIZE(first)
        if version >= 5 or use_metadata_id:
            metadata_id = msg.result_metadata_id
            if metadata_id is None and FEATURES:
                metadata_id = b""
            if type(metadata_id) is not bytes or PyBytes_GET_SIZE(metadata_id) > 0xFFFF:
                return None
            second = <bytes>metadata_id
            size += 2 + PyBytes_GET_SIZE(second)
    else:
        first = _utf8(msg.query)
        if first is None or PyBytes_GET_SIZE(first) > MAX_BODY:
            return None
        size += 4 + PyBytes_GET_SIZE(first)
    consistency_level = msg.consistency_level
    if type(consistency_level) is not int or not (0 <= consistency_level <= 0xFFFF):
        return None
    cdef unsigned int cl = consistency_level
    size += 2 + (4 if version >= 5 else 1)
    cdef uint32_t flags = 0
    cdef tuple params = None
    cdef Py_ssize_t i, n = 0
    raw_params = msg.query_params
    if raw_params is not None:
        if type(raw_params) is list:
            params = PyList_AsTuple(raw_params)  # a copy: nothing changes it from here
        elif type(raw_params) is tuple:
            params = <tuple>raw_params
        else:
            return None
        n = PyTuple_GET_SIZE(params)
        if n > 0xFFFF:
            return None
        flags |= _VALUES
        size += 2
        for i in range(n):
            v = <object>PyTuple_GET_ITEM(params, i)
            if v is None or v is _UNSET:
                size += 4
            elif type(v) is bytes and PyBytes_GET_SIZE(v) <= MAX_BODY:
                size += 4 + PyBytes_GET_SIZE(v)
            else:
                return None
    serial = msg.serial_consistency_level
    cdef unsigned int serial_cl = 0
    if serial is not None:
        if type(serial) is not int or not (0 <= serial <= 0xFFFF):
            return None
        serial_cl = serial
        if serial_cl:
            flags |= _SERIAL
            size += 2
    fetch_size = msg.fetch_size
    cdef long long fetch = 0
    if fetch_size is not None:
        if type(fetch_size) is not int or not (-2147483648 <= fetch_size <= 2147483647):
            return None
        fetch = fetch_size
        if fetch:
            flags |= _PAGE_SIZE
            size += 4
    paging_state = msg.paging_state
    if paging_state is not None:
        if type(paging_state) is not bytes or PyBytes_GET_SIZE(paging_state) > MAX_BODY:
            return None
        if PyBytes_GET_SIZE(paging_state):
            paging = <bytes>paging_state
            flags |= _PAGING_STATE
            size += 4 + PyBytes_GET_SIZE(paging)
    timestamp = msg.timestamp
    cdef unsigned long long ts = 0
    if timestamp is not None:  # the driver writes it unsigned (uint64_pack)
        if type(timestamp) is not int or not (0 <= timestamp <= 18446744073709551615):
            return None
        ts = timestamp
        flags |= _TIMESTAMP
        size += 8
    cdef int tracing = _flag(msg.tracing)
    if tracing < 0:
        return None
    cdef int skip_metadata = 0
    if FEATURES:  # scylla-driver 3.29.12: an EXECUTE skips the result metadata only with the metadata id
        skip_metadata = _flag(msg.skip_meta)
        if skip_metadata < 0:
            return None
        if skip_metadata and (use_metadata_id or not execute):
            flags |= _SKIP_METADATA
    cdef int tablet_version_block = -1
    if tablets_v2 and execute:  # one byte after the parameters, 0 when there is none
        block = msg.tablet_version_block
        if block is None:
            tablet_version_block = 0
        elif (type(block) is not int and type(block) is not bool) or not (0 <= block <= 0xFF):
            return None
        else:
            tablet_version_block = block
        size += 1
    if ks is not None:
        flags |= _KEYSPACE
        size += 2 + PyBytes_GET_SIZE(ks)
    if size > MAX_BODY:
        return None
    # the frame: from here on, only the locals above are read
    cdef bytes out = PyBytes_FromStringAndSize(NULL, 9 + size)
    cdef char *start = PyBytes_AS_STRING(out)
    cdef char *p = start
    p[0] = <char>version
    p[1] = <char>((_TRACING if tracing else 0) | (_USE_BETA if beta else 0))
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
            v = <object>PyTuple_GET_ITEM(params, i)
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
    if tablet_version_block >= 0:
        p[0] = <char>tablet_version_block
        p += 1
    if p - start != 9 + size:  # cannot happen: every length written was summed above
        raise SystemError("pyfactories: a frame was not written as sized")
    return out


cdef str _refused(str message, connection):
    """:func:`pyfactories.connection._encoding_py._refused`."""
    if LAST_ERROR:
        last_error = connection.last_error
        if last_error:
            message += ": %s" % (last_error,)
    return message


def send_msg(self, msg, request_id, cb, encoder=ProtocolHandler.encode_message,
             decoder=ProtocolHandler.decode_message, result_metadata=None):
    """:func:`pyfactories.connection._encoding_py.send_msg`. The connection's attributes are read as Python reads
    them, from its fields where they are its attributes (``connection_fields.pxd``)."""
    if get_is_defunct(self):
        raise ConnectionShutdown(_refused("Connection to %s is defunct" % self.endpoint, self))
    elif get_is_closed(self):
        raise ConnectionShutdown(_refused("Connection to %s is closed" % self.endpoint, self))
    elif not get_socket_writable(self):
        raise ConnectionBusy("Connection %s is overloaded" % self.endpoint)
    get_requests(self)[request_id] = (cb, decoder, result_metadata)
    features = self.features if FEATURES else None
    data = _encoded(encoder, msg, request_id, get_protocol_version(self), get_compressor(self),
                    get_allow_beta_protocol_version(self), features)
    if get_is_checksumming_enabled(self):
        data = _in_segments(self, data)
    self.push(data)
    return len(data)


cdef object _encoded(encoder, msg, request_id, protocol_version, compressor, allow_beta_protocol_version, features):
    """The frame of ``msg``: encoded here for the driver's own encoder, else by ``encoder``."""
    data = None
    if _plain_encoder(encoder):
        data = _encode(msg, request_id, protocol_version, compressor, allow_beta_protocol_version, features)
    if data is None and FEATURES:
        data = encoder(msg, request_id, protocol_version, compressor=compressor,
                       allow_beta_protocol_version=allow_beta_protocol_version, protocol_features=features)
    elif data is None:
        data = encoder(msg, request_id, protocol_version, compressor=compressor,
                       allow_beta_protocol_version=allow_beta_protocol_version)
    return data


cdef object _in_segments(self, data):
    """``data`` as the v5 segments of the connection's codec."""
    codec = self._segment_codec
    # our codec, uncompressed, its encode not replaced (timed), its flag offset the protocol's
    if type(data) is bytes and _plain_codec(codec):
        return _encode_plain(data)
    buffer = io.BytesIO()
    codec.encode(buffer, data)
    return buffer.getvalue()
