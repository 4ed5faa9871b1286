"""Requests encoded for the connection: the pure-Python twin (and specification) of the compiled
``pyfactories.connection._encoding``.

Every request goes through the driver's ``Connection.send_msg``: it records the request's callback
by stream id, has ``ProtocolHandler.encode_message`` write the message's body and frame header into
two ``BytesIO`` buffers, one ``write_*`` call per field, and with protocol v5 has the segment codec
write the frame into a third. :func:`send_msg` is that method; :func:`encode_message` writes the
frame of the two messages a query sends, ``EXECUTE`` (a bound prepared statement) and ``QUERY`` (a
simple statement), in one pass, with the driver's bytes. Any other message, and anything those two
carry that is less common (a custom payload, continuous paging, compression of protocol v4 frames,
a protocol version other than 3, 4 or 5, a field of an unexpected type), is left to the driver's
own ``encode_message``, which also raises the driver's errors. So is every message of a handler
whose ``encode_message`` is not the driver's (a subclass that replaces it keeps it).

On scylla-driver the frames follow its encoder: 3.29.12's takes the connection's negotiated
protocol features, and on a connection that negotiated them writes Scylla's extensions (the
result metadata id on any protocol version, with the skip-metadata flag, and a tablet version byte
after the parameters of an EXECUTE); its messages have no continuous paging options, and its
``send_msg`` names the connection's last error when it refuses a request.
"""

from __future__ import annotations

import inspect
import io
import struct
from typing import Any

from cassandra.connection import ConnectionBusy, ConnectionShutdown
from cassandra.protocol import ExecuteMessage, ProtocolHandler, QueryMessage, _UNSET_VALUE

from .. import _support

DRIVER_ENCODE = ProtocolHandler.encode_message.__func__
#: whether the driver's encoder takes the connection's ``protocol_features`` (scylla-driver 3.29.12)
FEATURES = "protocol_features" in inspect.signature(ProtocolHandler.encode_message).parameters
#: whether the driver's messages carry continuous paging options (cassandra-driver's; never encoded here)
CONTINUOUS_PAGING = hasattr(QueryMessage("", 1), "continuous_paging_options")
#: whether ``send_msg`` names the connection's last error when it refuses a request (scylla-driver)
LAST_ERROR = _support.PROTOCOL_FEATURES
VERSIONS = (3, 4, 5)

# frame flags, query flags (the protocol's; the driver's names in cassandra.protocol)
TRACING, USE_BETA = 0x02, 0x10
VALUES, SKIP_METADATA, PAGE_SIZE, PAGING_STATE, SERIAL, TIMESTAMP, KEYSPACE = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x80

_HEADER = struct.Struct(">BBhBi")
_SHORT, _INT, _UINT, _LONG = struct.Struct(">H"), struct.Struct(">i"), struct.Struct(">I"), struct.Struct(">Q")
#: the longest body a frame can carry (its length is a signed 32-bit int)
MAX_BODY = 2**31 - 1


def plain_encoder(encoder: Any) -> bool:
    """Whether ``encoder`` is the driver's ``encode_message`` (of any handler class that does not
    replace it or the frame header it writes)."""
    return (getattr(encoder, "__func__", None) is DRIVER_ENCODE
            and getattr(encoder, "__self__", None) is not None
            and encoder.__self__._write_header is ProtocolHandler._write_header)


def encode_message(msg: Any, stream_id: int, protocol_version: int, compressor: Any,
                   allow_beta_protocol_version: bool, protocol_features: Any = None) -> bytes | None:
    """The frame the driver's ``ProtocolHandler.encode_message`` writes for ``msg``, or ``None``
    when ``msg`` is not one this module encodes (see the module's docstring). ``protocol_features``
    (the connection's, on a driver whose encoder takes them: :data:`FEATURES`) is read before the message's fields.

    Every field is read once, in a fixed order, and taken only when it is of an exact type whose
    value is fixed once read (``None``, ``bool``, ``int``, ``str``, ``bytes``; the values as a
    ``list`` or ``tuple`` of ``bytes``, ``None`` and ``UNSET_VALUE``, copied at once into a tuple):
    after the reads no code of the application runs, so what is sized is what is written. A field
    of any other type (a subclass too) leaves the message to the driver."""
    kind = type(msg)
    if kind is not ExecuteMessage and kind is not QueryMessage:
        return None
    use_metadata_id = tablets_v2 = False
    if FEATURES and protocol_features is not None:
        use_metadata_id = _flag(protocol_features.use_metadata_id)
        tablets_v2 = _flag(protocol_features.tablets_routing_v2)
        if use_metadata_id is None or tablets_v2 is None:
            return None
    if type(protocol_version) is not int or protocol_version not in VERSIONS:
        return None
    if type(stream_id) is not int or not -32768 <= stream_id <= 32767:
        return None
    if compressor is not None and protocol_version < 5:
        return None
    beta = _flag(allow_beta_protocol_version)
    if beta is None:
        return None
    custom_payload = msg.custom_payload
    if custom_payload is not None and not (type(custom_payload) is dict and not custom_payload):
        return None
    if CONTINUOUS_PAGING and msg.continuous_paging_options is not None:
        return None
    out = []
    keyspace = msg.keyspace
    if keyspace is not None:
        if protocol_version < 5:
            return None
        keyspace = _utf8(keyspace)
        if keyspace is None or len(keyspace) > 0xFFFF:
            return None
    if kind is ExecuteMessage:
        ids = [msg.query_id]
        if protocol_version >= 5 or use_metadata_id:
            metadata_id = msg.result_metadata_id
            ids.append(b"" if metadata_id is None and FEATURES else metadata_id)
        for b in ids:
            if type(b) is not bytes or len(b) > 0xFFFF:
                return None
            out += [_SHORT.pack(len(b)), b]
    else:
        query = _utf8(msg.query)
        if query is None or len(query) > MAX_BODY:
            return None
        out += [_UINT.pack(len(query)), query]
    consistency_level = msg.consistency_level
    if type(consistency_level) is not int or not 0 <= consistency_level <= 0xFFFF:
        return None
    params = msg.query_params
    if params is not None:
        if type(params) is list:
            params = tuple(params)  # a copy: nothing changes it from here
        elif type(params) is not tuple:
            return None
        if len(params) > 0xFFFF:
            return None
        for v in params:
            if v is not None and v is not _UNSET_VALUE and (type(v) is not bytes or len(v) > MAX_BODY):
                return None
    serial = msg.serial_consistency_level
    if serial is not None and (type(serial) is not int or not 0 <= serial <= 0xFFFF):
        return None
    fetch_size = msg.fetch_size
    if fetch_size is not None and (type(fetch_size) is not int or not -2**31 <= fetch_size < 2**31):
        return None
    paging_state = msg.paging_state
    if paging_state is not None and (type(paging_state) is not bytes or len(paging_state) > MAX_BODY):
        return None
    timestamp = msg.timestamp
    if timestamp is not None and (type(timestamp) is not int or not 0 <= timestamp < 2**64):
        return None
    tracing = _flag(msg.tracing)
    if tracing is None:
        return None
    skip_metadata = False
    if FEATURES:  # scylla-driver 3.29.12: an EXECUTE skips the result metadata only with the metadata id
        skip_metadata = _flag(msg.skip_meta)
        if skip_metadata is None:
            return None
        skip_metadata = skip_metadata and (use_metadata_id or kind is QueryMessage)
    tablet_version_block = None
    if tablets_v2 and kind is ExecuteMessage:  # one byte after the parameters, 0 when there is none
        tablet_version_block = msg.tablet_version_block
        if tablet_version_block is None:
            tablet_version_block = 0
        elif type(tablet_version_block) not in (int, bool) or not 0 <= tablet_version_block <= 0xFF:
            return None
        tablet_version_block = int(tablet_version_block)
    flags = ((VALUES if params is not None else 0) | (SKIP_METADATA if skip_metadata else 0) | (SERIAL if serial else 0) | (PAGE_SIZE if fetch_size else 0)
             | (PAGING_STATE if paging_state else 0) | (TIMESTAMP if timestamp is not None else 0)
             | (KEYSPACE if keyspace is not None else 0))
    out += [_SHORT.pack(consistency_level), _UINT.pack(flags) if protocol_version >= 5 else bytes([flags])]
    if params is not None:
        out.append(_SHORT.pack(len(params)))
        for v in params:
            if v is None:
                out.append(_INT.pack(-1))
            elif v is _UNSET_VALUE:
                out.append(_INT.pack(-2))
            else:
                out += [_UINT.pack(len(v)), v]
    if fetch_size:
        out.append(_INT.pack(fetch_size))
    if paging_state:
        out += [_UINT.pack(len(paging_state)), paging_state]
    if serial:
        out.append(_SHORT.pack(serial))
    if timestamp is not None:
        out.append(_LONG.pack(timestamp))
    if keyspace is not None:
        out += [_SHORT.pack(len(keyspace)), keyspace]
    if tablet_version_block is not None:
        out.append(bytes([tablet_version_block]))
    body = b"".join(out)
    if len(body) > MAX_BODY:
        return None  # the driver's error (its frame's length is a signed 32-bit int)
    return _HEADER.pack(protocol_version, (TRACING if tracing else 0) | (USE_BETA if beta else 0), stream_id,
                        kind.opcode, len(body)) + body


def _refused(message: str, connection: Any) -> str:
    """The message of a refused request: on scylla-driver with the connection's last error."""
    last_error = connection.last_error if LAST_ERROR else None
    if last_error:
        message += ": %s" % (last_error,)
    return message


def _flag(value: Any) -> bool | None:
    """A flag's truth when it is ``None``, a ``bool`` or an ``int`` (whose truth runs no code); None otherwise."""
    if value is None or value is False:
        return False
    if value is True:
        return True
    if type(value) is int:
        return value != 0
    return None


def _utf8(s: Any) -> bytes | None:
    """A string field as the driver writes it (``str`` in UTF-8, ``bytes`` as they are); None for
    anything else, and for a ``str`` that has no UTF-8 (a lone surrogate: the driver's error)."""
    if type(s) is str:
        try:
            return s.encode("utf8")
        except UnicodeEncodeError:
            return None
    return s if type(s) is bytes else None


def send_msg(self: Any, msg: Any, request_id: int, cb: Any, encoder: Any = ProtocolHandler.encode_message,
             decoder: Any = ProtocolHandler.decode_message, result_metadata: Any = None) -> int:
    """The driver's ``Connection.send_msg`` (same checks, errors and order: the request is recorded
    before it is encoded), with :func:`encode_message` for the driver's encoder."""
    if self.is_defunct:
        raise ConnectionShutdown(_refused("Connection to %s is defunct" % self.endpoint, self))
    elif self.is_closed:
        raise ConnectionShutdown(_refused("Connection to %s is closed" % self.endpoint, self))
    elif not self._socket_writable:
        raise ConnectionBusy("Connection %s is overloaded" % self.endpoint)
    self._requests[request_id] = (cb, decoder, result_metadata)
    data = None
    features = self.features if FEATURES else None
    if plain_encoder(encoder):
        data = encode_message(msg, request_id, self.protocol_version, self.compressor,
                              self.allow_beta_protocol_version, features)
    if data is None and FEATURES:
        data = encoder(msg, request_id, self.protocol_version, compressor=self.compressor,
                       allow_beta_protocol_version=self.allow_beta_protocol_version, protocol_features=features)
    elif data is None:
        data = encoder(msg, request_id, self.protocol_version, compressor=self.compressor,
                       allow_beta_protocol_version=self.allow_beta_protocol_version)
    if self._is_checksumming_enabled:
        buffer = io.BytesIO()
        self._segment_codec.encode(buffer, data)
        data = buffer.getvalue()
    self.push(data)
    return len(data)
