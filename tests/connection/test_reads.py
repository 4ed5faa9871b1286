"""Reading the socket: our connections take up to 64 KiB a read where the driver's take 4 KiB, so a
200-row page is one ``recv`` instead of five or more; the bytes handed to the read loop are the same."""

from __future__ import annotations

import errno

import pytest
from cassandra.connection import Connection
from cassandra.io.asyncioreactor import AsyncioConnection
from cassandra.io.libevreactor import LibevConnection

from pyfactories.connection import TimerQueueAsyncioConnection, TimerQueueLibevConnection


class PendingSocket:
    """A non-blocking socket with ``pending`` bytes to read: each ``recv`` takes what fits, then
    ``EAGAIN``; the sizes asked for are recorded."""

    def __init__(self, pending: bytes) -> None:
        self.pending = pending
        self.asked: list[int] = []

    def recv(self, size: int) -> bytes:
        self.asked.append(size)
        if not self.pending:
            raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
        data, self.pending = self.pending[:size], self.pending[size:]
        return data


def _read(cls: type, pending: bytes) -> tuple[list[int], list[bytes]]:
    conn = cls.__new__(cls)
    Connection.__init__(conn, "127.0.0.1")
    conn._socket = PendingSocket(pending)
    handed: list[bytes] = []
    conn.process_io_buffer = lambda: handed.append(conn._iobuf.getvalue())
    LibevConnection.handle_read(conn, None, 0)  # the driver's read loop, on either class
    return conn._socket.asked, handed


@pytest.mark.parametrize("size", [1, 4095, 4096, 20_000, 65_535, 65_536, 150_000])
def test_a_read_takes_what_is_there_in_fewer_calls(size):
    pending = bytes(range(256)) * (size // 256) + bytes(size % 256)
    ours, theirs = _read(TimerQueueLibevConnection, pending), _read(LibevConnection, pending)
    assert ours[1] == theirs[1] == [pending]  # the same bytes, handed over once
    # full reads, then the short one (or the one that finds nothing) that ends the loop
    assert len(ours[0]) == size // (64 * 1024) + 1
    assert len(theirs[0]) == size // 4096 + 1
    assert set(ours[0]) == {64 * 1024} and set(theirs[0]) == {4096}


def test_nothing_to_read_closes_as_the_drivers():
    for cls in (TimerQueueLibevConnection, LibevConnection):
        conn = cls.__new__(cls)
        Connection.__init__(conn, "127.0.0.1")
        conn._socket = PendingSocket(b"")
        conn._socket.recv = lambda size: b""  # the peer closed: an empty read
        closed = []
        conn.close = lambda: closed.append(True)
        LibevConnection.handle_read(conn, None, 0)
        assert closed == [True]


def test_both_our_connection_classes_read_64_kib():
    """The asyncio reactor's read (``sock_recv(socket, self.in_buffer_size)``) takes the same size."""
    assert TimerQueueAsyncioConnection.in_buffer_size == TimerQueueLibevConnection.in_buffer_size == 64 * 1024
    assert AsyncioConnection.in_buffer_size == LibevConnection.in_buffer_size == 4096
