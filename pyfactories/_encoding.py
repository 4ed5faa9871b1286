"""Requests encoded for the connection: the pure-Python twin (and specification) of the compiled
``pyfactories._encoder``.

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
"""

from __future__ import annotations

import io
import struct
from typing import Any

from cassandra import ProtocolVersion
from cassandra.connection import ConnectionBusy, ConnectionShutdown
from cassandra.protocol import ExecuteMessage, ProtocolHandler, QueryMessage, _UNSET_VALUE

from . import _driver

#: whether the driver's handlers take ``protocol_features`` (scylla-driver): its own encoding then
ENCODE_OURS = not _driver.takes_protocol_features()
DRIVER_ENCODE = ProtocolHandler.encode_message.__func__
VERSIONS = (3, 4, 5)

# frame flags, query flags (the protocol's; the driver's names in cassandra.protocol)
TRACING, USE_BETA = 0x02, 0x10
VALUES, PAGE_SIZE, PAGING_STATE, SERIAL, TIMESTAMP, KEYSPACE = 0x01, 0x04, 0x08, 0x10, 0x20, 0x80

_HEADER = struct.Struct(">BBhBi")
_SHORT, _INT, _UINT, _LONG = struct.Struct(">H"), struct.Struct(">i"), struct.Struct(">I"), struct.Struct(">Q")


def plain_encoder(encoder: Any) -> bool:
    """Whether ``encoder`` is the driver's ``encode_message`` (of any handler class that does not
    replace it or the frame header it writes)."""
    return (ENCODE_OURS and getattr(encoder, "__func__", None) is DRIVER_ENCODE
            and getattr(encoder, "__self__", None) is not None
            and encoder.__self__._write_header is ProtocolHandler._write_header)


def encode_message(msg: Any, stream_id: int, protocol_version: int, compressor: Any,
                   allow_beta_protocol_version: bool) -> bytes | None:
    """The frame the driver's ``ProtocolHandler.encode_message`` writes for ``msg``, or ``None``
    when ``msg`` is not one this module encodes (see the module's docstring)."""
    kind = type(msg)
    if kind is not ExecuteMessage and kind is not QueryMessage:
        return None
    if (protocol_version not in VERSIONS or msg.custom_payload or msg.continuous_paging_options
            or (compressor and protocol_version < 5) or (msg.keyspace is not None and protocol_version < 5)):
        return None
    try:
        body = _body(msg, kind, protocol_version)
        if body is None:
            return None
        flags = (TRACING if msg.tracing else 0) | (USE_BETA if allow_beta_protocol_version else 0)
        return _HEADER.pack(protocol_version, flags, stream_id, kind.opcode, len(body)) + body
    except (struct.error, TypeError, OverflowError):
        return None  # the driver's encoding raises its own error for it


def _body(msg: Any, kind: type, protocol_version: int) -> bytes | None:
    out = []
    if kind is ExecuteMessage:
        ids = [msg.query_id] + ([msg.result_metadata_id] if ProtocolVersion.uses_prepared_metadata(protocol_version)
                                else [])
        for b in ids:
            if type(b) is not bytes:
                return None
            out += [_SHORT.pack(len(b)), b]
    else:
        query = msg.query
        if type(query) is str:
            query = query.encode("utf8")
        elif type(query) is not bytes:
            return None
        out += [_INT.pack(len(query)), query]
    params = msg.query_params
    flags = ((VALUES if params is not None else 0) | (SERIAL if msg.serial_consistency_level else 0)
             | (PAGE_SIZE if msg.fetch_size else 0) | (PAGING_STATE if msg.paging_state else 0)
             | (TIMESTAMP if msg.timestamp is not None else 0) | (KEYSPACE if msg.keyspace is not None else 0))
    out += [_SHORT.pack(msg.consistency_level),
            _UINT.pack(flags) if protocol_version >= 5 else bytes([flags])]
    if params is not None:
        out.append(_SHORT.pack(len(params)))
        for v in params:
            if v is None:
                out.append(_INT.pack(-1))
            elif v is _UNSET_VALUE:
                out.append(_INT.pack(-2))
            elif type(v) is bytes:
                out += [_INT.pack(len(v)), v]
            else:
                return None
    if msg.fetch_size:
        out.append(_INT.pack(msg.fetch_size))
    if msg.paging_state:
        if type(msg.paging_state) is not bytes:
            return None
        out += [_INT.pack(len(msg.paging_state)), msg.paging_state]
    if msg.serial_consistency_level:
        out.append(_SHORT.pack(msg.serial_consistency_level))
    if msg.timestamp is not None:
        out.append(_LONG.pack(msg.timestamp))
    if msg.keyspace is not None:
        ks = msg.keyspace.encode("utf8") if type(msg.keyspace) is str else msg.keyspace
        if type(ks) is not bytes:
            return None
        out += [_SHORT.pack(len(ks)), ks]
    return b"".join(out)


def send_msg(self: Any, msg: Any, request_id: int, cb: Any, encoder: Any = ProtocolHandler.encode_message,
             decoder: Any = ProtocolHandler.decode_message, result_metadata: Any = None) -> int:
    """The driver's ``Connection.send_msg`` (same checks, errors and order: the request is recorded
    before it is encoded), with :func:`encode_message` for the driver's encoder."""
    if self.is_defunct:
        raise ConnectionShutdown("Connection to %s is defunct" % self.endpoint)
    elif self.is_closed:
        raise ConnectionShutdown("Connection to %s is closed" % self.endpoint)
    elif not self._socket_writable:
        raise ConnectionBusy("Connection %s is overloaded" % self.endpoint)
    self._requests[request_id] = (cb, decoder, result_metadata)
    data = None
    if plain_encoder(encoder):
        data = encode_message(msg, request_id, self.protocol_version, self.compressor,
                              self.allow_beta_protocol_version)
    if data is None:
        data = encoder(msg, request_id, self.protocol_version, compressor=self.compressor,
                       allow_beta_protocol_version=self.allow_beta_protocol_version)
    if self._is_checksumming_enabled:
        buffer = io.BytesIO()
        self._segment_codec.encode(buffer, data)
        data = buffer.getvalue()
    self.push(data)
    return len(data)
