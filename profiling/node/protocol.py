"""Just enough of the CQL native protocol (v4) to tell that a node really serves CQL.

An open TCP port is not enough: Cassandra binds 9042 before it is ready to
answer queries in some phases, and another program may hold the port.  We send
an OPTIONS request and insist on a well-formed SUPPORTED response.
"""

from __future__ import annotations

import socket
import struct

VERSION = 0x04
RESPONSE_VERSION = 0x80 | VERSION
OPCODE_ERROR = 0x00
OPCODE_OPTIONS = 0x05
OPCODE_SUPPORTED = 0x06
HEADER = struct.Struct(">BBhBi")  # version, flags, stream id, opcode, body length
MAX_BODY = 1 << 20


class ProtocolError(Exception):
    """The peer answered, but not like a CQL server."""


def options_frame(stream: int = 1) -> bytes:
    """An OPTIONS request: a bare 9-byte header with an empty body."""
    return HEADER.pack(VERSION, 0, stream, OPCODE_OPTIONS, 0)


def parse_header(data: bytes, stream: int = 1) -> int:
    """Check a response header to OPTIONS; return the body length."""
    if len(data) != HEADER.size:
        raise ProtocolError(f"short header ({len(data)} bytes)")
    version, _flags, got_stream, opcode, length = HEADER.unpack(data)
    length = int(length)
    if version != RESPONSE_VERSION:
        raise ProtocolError(f"response version 0x{version:02x}, expected 0x{RESPONSE_VERSION:02x}")
    if got_stream != stream:
        raise ProtocolError(f"response to stream {got_stream}, expected {stream}")
    if opcode == OPCODE_ERROR:
        raise ProtocolError("server answered OPTIONS with an ERROR frame")
    if opcode != OPCODE_SUPPORTED:
        raise ProtocolError(f"opcode 0x{opcode:02x}, expected SUPPORTED (0x06)")
    if not 0 <= length <= MAX_BODY:
        raise ProtocolError(f"implausible body length {length}")
    return length


def parse_string_multimap(body: bytes) -> dict[str, list[str]]:
    """Decode a [string multimap]: n, then n x (key, m, m x value), big-endian shorts."""
    pos = 0

    def short() -> int:
        nonlocal pos
        if pos + 2 > len(body):
            raise ProtocolError("truncated SUPPORTED body")
        (value,) = struct.unpack_from(">H", body, pos)
        pos += 2
        return int(value)

    def string() -> str:
        nonlocal pos
        n = short()
        if pos + n > len(body):
            raise ProtocolError("truncated SUPPORTED body")
        value = body[pos:pos + n].decode("utf-8")
        pos += n
        return value

    result: dict[str, list[str]] = {}
    for _ in range(short()):
        key = string()
        result[key] = [string() for _ in range(short())]
    return result


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise ProtocolError("connection closed mid-frame")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def handshake(host: str, port: int = 9042, timeout: float = 2.0) -> dict[str, list[str]]:
    """OPTIONS -> SUPPORTED round trip; returns e.g. ``{"CQL_VERSION": ["3.4.7"], ...}``.

    Raises OSError when nothing listens, ProtocolError on a wrong answer.
    """
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(options_frame())
        length = parse_header(_recv_exact(sock, HEADER.size))
        return parse_string_multimap(_recv_exact(sock, length))


def answers(host: str, port: int = 9042, timeout: float = 2.0) -> bool:
    try:
        handshake(host, port, timeout)
    except (OSError, ProtocolError, UnicodeDecodeError):
        return False
    return True
