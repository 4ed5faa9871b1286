"""Coalesced writes (``pyfactories.connection._writes_py``): the libev connection's on a fake socket and loop, the
asyncio connection's on a socket pair and a loop of its own; next to the driver's classes on the same."""

from __future__ import annotations

import asyncio
import errno
import socket
import ssl
import sys
import threading
import time
from collections import deque

import pytest
from cassandra.connection import Connection, ConnectionShutdown
from cassandra.io import libevreactor
from cassandra.io.asyncioreactor import AsyncioConnection
from cassandra.io.libevreactor import LibevConnection

from pyfactories.connection import _writes_py
from pyfactories.connection import TimerQueueAsyncioConnection, TimerQueueLibevConnection

#: ours with the queue's per-request steps in pure Python, beside the compiled ones of the default build
OursInPython = type("OursInPython", (TimerQueueLibevConnection,), {"push": _writes_py.push, "_take": _writes_py.take})
CLASSES = {"driver": LibevConnection, "ours": TimerQueueLibevConnection, "ours-py": OursInPython}


@pytest.fixture(params=["ours", "ours-py"], ids=["c", "py"])
def ours(request) -> str:
    """Our libev connection, its write queue's steps compiled (``c``) or in pure Python (``py``)."""
    return request.param


class FakeLoop:
    """The driver's ``LibevLoop`` as a connection sees it: wake-ups counted, closed connections kept."""

    def __init__(self) -> None:
        self.notified = 0
        self.destroyed: list[object] = []
        self._thread: threading.Thread | None = None  # the loop's thread: none started

    def notify(self) -> None:
        self.notified += 1

    def connection_destroyed(self, conn: object) -> None:
        self.destroyed.append(conn)


class FakeSocket:
    """Takes at most ``room`` bytes per ``send`` (None: all), or raises the next of ``errors``;
    ``recv`` gives ``incoming`` once."""

    def __init__(self, room: int | None = None) -> None:
        self.room = room
        self.incoming = b""
        self.sends: list[bytes] = []
        self.errors: list[BaseException] = []
        self.closed = False

    def send(self, data) -> int:
        if self.errors:
            raise self.errors.pop(0)
        data = bytes(data)
        n = len(data) if self.room is None else min(self.room, len(data))
        self.sends.append(data[:n])
        return n

    def recv(self, _size: int) -> bytes:
        data, self.incoming = self.incoming, b""
        return data

    @property
    def received(self) -> bytes:
        return b"".join(self.sends)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def loop(monkeypatch) -> FakeLoop:
    fake = FakeLoop()
    monkeypatch.setattr(libevreactor, "_global_loop", fake)
    return fake


def make(kind: str, sock: FakeSocket | None = None):
    """A connection of ``kind`` without the driver's socket set-up: our fakes instead."""
    cls = CLASSES[kind]
    conn = cls.__new__(cls)
    Connection.__init__(conn, "127.0.0.1")
    conn.deque, conn._deque_lock = deque(), threading.Lock()
    conn._socket = sock or FakeSocket()
    return conn


def drain(conn, limit: int = 10_000) -> int:
    """Write events until the queue is empty (or the socket is not writable): how many it took."""
    for n in range(1, limit):
        conn.handle_write(None, 0)
        if not conn.deque or not conn._socket_writable:
            return n
    raise AssertionError("the queue never drained")


def messages(n: int, size: int = 100) -> list[bytes]:
    return [bytes([i % 251]) * size + i.to_bytes(4, "big") for i in range(n)]


@pytest.mark.parametrize("kind", CLASSES)
def test_bytes_leave_in_push_order(loop, kind):
    conn = make(kind)
    msgs = messages(300, 1000) + [b"z" * 70_000]
    for m in msgs:
        conn.push(m)
    drain(conn)
    assert conn._socket.received == b"".join(msgs)
    assert conn._socket_writable


@pytest.mark.parametrize("kind", CLASSES)
def test_one_send_for_what_is_queued_where_the_driver_sends_each(loop, kind):
    conn = make(kind)
    msgs = messages(50)
    for m in msgs:
        conn.push(m)
    conn.handle_write(None, 0)
    assert conn._socket.sends == ([b"".join(msgs)] if kind != "driver" else msgs)
    assert not conn.deque


def test_a_write_is_capped_and_the_loop_gets_a_turn(loop, ours):
    conn = make(ours)
    conn.max_write_size, conn.max_writes_per_event = 1000, 3
    msgs = messages(100, 96)  # 100 bytes each: 10 per write
    for m in msgs:
        conn.push(m)
    conn.handle_write(None, 0)
    assert [len(s) for s in conn._socket.sends] == [1000] * 3
    assert len(conn.deque) == 70
    drain(conn)
    assert conn._socket.received == b"".join(msgs)
    assert max(len(s) for s in conn._socket.sends) <= 1000


def test_a_request_larger_than_a_write_goes_in_slices(loop, ours):
    conn = make(ours)
    conn.max_write_size = 4096
    big = bytes(range(256)) * 100  # 25,600 bytes
    conn.push(b"head")
    conn.push(big)
    conn.push(b"tail")
    drain(conn)
    assert conn._socket.received == b"head" + big + b"tail"
    assert max(len(s) for s in conn._socket.sends) <= 4096


@pytest.mark.parametrize("room", [1, 7, 100, 333])
def test_partial_sends_keep_the_rest_in_order(loop, room, ours):
    conn = make(ours, FakeSocket(room))
    msgs = messages(40, 50)
    for i, m in enumerate(msgs):
        conn.push(m)
        if i % 7 == 0:
            conn.handle_write(None, 0)
    drain(conn)
    assert conn._socket.received == b"".join(msgs)


def test_one_wake_up_for_many_pushes_from_many_threads(loop, ours):
    conn = make(ours)
    per_thread, threads = 500, 8
    start = threading.Barrier(threads)

    def pusher(t: int) -> None:
        start.wait()
        for i in range(per_thread):
            conn.push(t.to_bytes(1, "big") + i.to_bytes(4, "big"))

    workers = [threading.Thread(target=pusher, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert loop.notified == 1
    drain(conn)
    got = conn._socket.received
    assert len(got) == 5 * per_thread * threads
    for t in range(threads):  # each thread's requests in its order
        mine = [got[i:i + 5] for i in range(0, len(got), 5) if got[i] == t]
        assert mine == [t.to_bytes(1, "big") + i.to_bytes(4, "big") for i in range(per_thread)]
    conn.push(b"again")  # empty again: the next push wakes the loop again
    assert loop.notified == 2


def test_the_driver_wakes_the_loop_for_every_push(loop):
    conn = make("driver")
    for m in messages(10):
        conn.push(m)
    assert loop.notified == 10


def test_pushes_while_a_write_is_pending_wake_nobody(loop, ours):
    conn = make(ours, FakeSocket(room=10))
    conn.push(b"x" * 100)
    conn.handle_write(None, 0)  # partial: the rest stays queued and the write watcher on
    assert conn.deque and loop.notified == 1
    conn.push(b"y" * 5)
    assert loop.notified == 1
    conn._socket.room = None
    drain(conn)
    assert conn._socket.received == b"x" * 100 + b"y" * 5


def test_a_push_on_the_loops_thread_wakes_nothing(loop, ours):
    conn = make(ours)
    loop._thread = threading.current_thread()
    conn.push(b"from a callback")
    assert loop.notified == 0 and list(conn.deque) == [b"from a callback"]
    other = threading.Thread(target=lambda: (conn.deque.clear(), conn.push(b"from another thread")))
    other.start()
    other.join()
    assert loop.notified == 1


class Replying:
    """A connection whose responses' callbacks each send a request (as a callback chain does)."""

    def process_io_buffer(self) -> None:
        data = self._iobuf.getvalue()
        self._iobuf.seek(0)
        self._iobuf.truncate()
        for byte in data:
            self.push(b"next " + bytes([byte]))


@pytest.mark.parametrize("kind", CLASSES)
def test_requests_sent_by_callbacks_leave_with_the_read(loop, kind):
    cls = type(f"Replying{kind}", (Replying, CLASSES[kind]), {})
    conn = cls.__new__(cls)
    Connection.__init__(conn, "127.0.0.1")
    conn.deque, conn._deque_lock, conn._socket = deque(), threading.Lock(), FakeSocket()
    conn._socket.incoming = b"abc"
    conn.handle_read(None, 0)
    expected = [b"next a", b"next b", b"next c"]
    if kind != "driver":
        assert conn._socket.sends == [b"".join(expected)] and not conn.deque
    else:  # the driver waits for the write watcher its loop starts
        assert conn._socket.sends == [] and list(conn.deque) == expected


@pytest.mark.parametrize("kind", CLASSES)
def test_would_block_keeps_the_data_and_marks_the_socket_busy(loop, kind):
    conn = make(kind)
    conn.push(b"a" * 10)
    conn.push(b"b" * 10)
    conn._socket.errors.append(socket.error(errno.EAGAIN, "try again"))
    conn.handle_write(None, 0)
    assert not conn._socket_writable
    assert not conn.is_defunct
    conn.handle_write(None, 0)
    conn.handle_write(None, 0)
    assert conn._socket.received == b"a" * 10 + b"b" * 10
    assert conn._socket_writable and not conn.deque


def test_send_returning_zero_is_would_block_as_for_the_driver(loop):
    outcomes = {}
    for kind in CLASSES:
        conn = make(kind, FakeSocket(room=0))
        conn.push(b"abc")
        conn.handle_write(None, 0)
        outcomes[kind] = (conn._socket_writable, b"".join(bytes(x) for x in conn.deque))
    assert outcomes["ours"] == outcomes["ours-py"] == outcomes["driver"] == (False, b"abc")


def test_tls_retry_sends_the_same_bytes_alone(loop, ours):
    conn = make(ours)
    conn.push(b"first")
    conn.push(b"second")
    want = ssl.SSLWantWriteError(ssl.SSL_ERROR_WANT_WRITE, "want write")
    conn._socket.errors.append(want)
    conn.handle_write(None, 0)  # tried "firstsecond", wanted a write
    assert conn._socket_writable and not conn.is_defunct
    conn.push(b"third")
    conn.handle_write(None, 0)
    assert conn._socket.sends[0] == b"firstsecond"  # the same bytes, not joined with "third"
    assert conn._socket.received == b"firstsecondthird"


def _requests_errors(conn) -> list[BaseException]:
    seen: list[BaseException] = []
    for stream in (1, 2):
        conn._requests[stream] = (seen.append, None, None)
    return seen


@pytest.mark.parametrize("revents", [0, "EV_ERROR"])
def test_a_socket_error_defuncts_as_the_driver(loop, revents):
    outcomes = {}
    for kind in CLASSES:
        conn = make(kind)
        seen = _requests_errors(conn)
        conn.push(b"request")
        if revents:
            conn.handle_write(None, libevreactor.libev.EV_ERROR, errno.ECONNRESET)
        else:
            conn._socket.errors.append(ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"))
            conn.handle_write(None, 0)
        assert conn.is_defunct and conn.is_closed
        assert loop.destroyed[-1] is conn  # the loop stops its watchers (and, on scylla-driver, closes the socket)
        assert len(seen) == 2 and all(isinstance(e, ConnectionShutdown) for e in seen)
        outcomes[kind] = (type(conn.last_error), conn.last_error.args, [str(e) for e in seen],
                          conn._socket.sends, conn._socket.closed)
    assert outcomes["ours"] == outcomes["ours-py"] == outcomes["driver"]


@pytest.mark.parametrize("revents", [0, "EV_ERROR"])
def test_a_write_event_after_close_sends_nothing_as_the_driver(loop, revents):
    """cassandra-driver's ``close()`` closes the socket; scylla-driver's leaves it to its loop's next
    turn and its ``handle_write`` returns on a closed connection: either way nothing more is sent."""
    outcomes = {}
    for kind in CLASSES:
        conn = make(kind)
        conn.push(b"pending")
        conn.close()
        if conn._socket.closed:  # what sending on a closed socket raises
            conn._socket.errors.append(OSError(errno.EBADF, "Bad file descriptor"))
        conn.handle_write(None, libevreactor.libev.EV_ERROR if revents else 0, errno.ECONNRESET if revents else None)
        outcomes[kind] = (conn._socket.sends, conn.is_defunct, conn.is_closed, conn._socket.closed)
    assert outcomes["ours"] == outcomes["ours-py"] == outcomes["driver"] and outcomes["ours"][:3] == ([], False, True)


def test_send_msg_after_close_raises_the_drivers_error(loop, ours):
    conn = make(ours)
    conn.push(b"pending")
    conn.close()
    with pytest.raises(ConnectionShutdown, match="is closed"):
        conn.send_msg(object(), 1, lambda _: None)


# --- a request on an idle connection, sent from its caller's thread ---------------------------

@pytest.fixture
def paired(loop):
    """A non-blocking socket of a pair (the other end returned to read from), and a loop whose thread is
    another one than the test's."""
    ours_end, theirs = socket.socketpair()
    ours_end.setblocking(False)
    theirs.settimeout(5)
    elsewhere = threading.Thread(target=lambda: None)
    elsewhere.start()
    elsewhere.join()
    loop._thread = elsewhere
    yield ours_end, theirs
    ours_end.close()
    theirs.close()


def idle(kind, sock):
    conn = make(kind, sock)
    conn.in_flight = 1  # the request being pushed
    return conn


def read_exactly(sock, n: int) -> bytes:
    got = b""
    while len(got) < n:
        chunk = sock.recv(n - len(got))
        assert chunk, "the other end closed"
        got += chunk
    return got


def test_an_idle_connections_request_is_sent_by_its_caller(paired, loop, ours):
    sock, other = paired
    conn = idle(ours, sock)
    conn.push(b"request")
    assert read_exactly(other, 7) == b"request"
    assert not conn.deque and loop.notified == 0  # nothing queued, no wake-up


@pytest.mark.parametrize("why", ["in flight", "loop's thread", "blocking", "not writable", "closed", "tls retry",
                                 "queued"])
def test_otherwise_a_request_is_queued_as_before(paired, loop, ours, why):
    sock, other = paired
    conn = idle(ours, sock)
    if why == "in flight":
        conn.in_flight = 2
    elif why == "loop's thread":
        loop._thread = threading.current_thread()
    elif why == "blocking":
        sock.setblocking(True)
    elif why == "not writable":
        conn._socket_writable = False
    elif why == "closed":
        conn.is_closed = True
    elif why == "tls retry":
        conn._write_again = True
    else:
        conn.deque.append(b"earlier ")
    conn.push(b"request")
    assert list(conn.deque)[-1] == b"request"
    assert loop.notified == (0 if why in ("loop's thread", "queued") else 1)
    other.setblocking(False)
    with pytest.raises(BlockingIOError):
        other.recv(100)


def test_what_the_socket_did_not_take_is_queued_in_order(paired, loop, ours):
    sock, other = paired
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    conn = idle(ours, sock)
    big = bytes(range(256)) * 16_384  # 4 MiB: more than the socket takes at once
    conn.push(big)
    assert conn.deque and loop.notified == 1
    conn.in_flight = 1
    conn.push(b"next")  # the queue holds the rest: queued behind it, no second wake-up
    assert loop.notified == 1 and list(conn.deque)[-1] == b"next"
    got = []
    reader = threading.Thread(target=lambda: got.append(read_exactly(other, len(big) + 4)))
    reader.start()
    while conn.deque:
        conn.handle_write(None, 0)
        time.sleep(0.001)
    reader.join(120)
    assert got == [big + b"next"]


def test_a_send_that_fails_defuncts_as_the_loops_write_does_for_the_driver(loop):
    elsewhere = threading.Thread(target=lambda: None)
    elsewhere.start()
    elsewhere.join()
    loop._thread = elsewhere
    outcomes = {}
    for kind in CLASSES:
        sock, other = socket.socketpair()
        sock.setblocking(False)
        other.close()  # the other end is gone: a send fails
        conn = idle(kind, sock)
        seen = _requests_errors(conn)
        woken = loop.notified
        conn.push(b"request")
        if kind == "driver":
            conn.handle_write(None, 0)  # the driver's loop meets the error on its write
        else:
            assert not conn.deque and loop.notified == woken  # ours met it on the caller's send
        assert conn.is_defunct and conn.is_closed
        outcomes[kind] = (type(conn.last_error), conn.last_error.args, [str(e) for e in seen])
        sock.close()
    assert outcomes["ours"] == outcomes["ours-py"] == outcomes["driver"]
    assert outcomes["ours"][0] is BrokenPipeError


def test_a_send_that_would_block_is_left_to_the_loops_write(paired, loop, ours):
    sock, other = paired
    conn = idle(ours, sock)
    while True:  # fill the socket's buffer
        try:
            sock.send(b"x" * 65536)
        except BlockingIOError:
            break
    conn.push(b"request")
    assert list(conn.deque) == [b"request"] and loop.notified == 1
    assert conn._socket_writable and not conn.is_defunct  # the loop's write marks it, as the driver's does


def test_callers_and_the_loop_write_whole_requests_in_order(paired, loop, ours):
    """Callers pushing on an idle-looking connection from four threads while the loop's thread writes:
    every request arrives whole, and each thread's requests in the order it pushed them."""
    sock, other = paired
    conn = idle(ours, sock)
    per_thread, size = 300, 700
    done = threading.Event()

    def caller(t: int) -> None:
        for i in range(per_thread):
            conn.in_flight = 1 if i % 3 else 2  # now idle, now not: both paths
            conn.push(bytes([t]) * (size - 4) + i.to_bytes(4, "big"))

    def loop_thread() -> None:
        while not done.is_set() or conn.deque:
            conn.handle_write(None, 0)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch between taking bytes and sending them, if they can
    received = []
    reader = threading.Thread(target=lambda: received.append(read_exactly(other, 4 * per_thread * size)))
    writer = threading.Thread(target=loop_thread)
    callers = [threading.Thread(target=caller, args=(t,)) for t in range(4)]
    reader.start()
    writer.start()
    try:
        for c in callers:
            c.start()
        for c in callers:
            c.join()
        done.set()
        writer.join(120)
        reader.join(120)
    finally:
        sys.setswitchinterval(interval)
    assert not writer.is_alive() and not reader.is_alive()
    (stream,) = received
    seen = {t: [] for t in range(4)}
    for at in range(0, len(stream), size):
        request = stream[at:at + size]
        t = request[0]
        assert request[:size - 4] == bytes([t]) * (size - 4)
        seen[t].append(int.from_bytes(request[-4:], "big"))
    assert all(seen[t] == list(range(per_thread)) for t in range(4))


# --- the asyncio connection -------------------------------------------------------------------


class CountingEvent(asyncio.Event):
    def __init__(self) -> None:
        super().__init__()
        self.sets = 0

    def set(self) -> None:
        self.sets += 1
        super().set()


async def _settle() -> None:
    """Let the tasks a test left (closings, writers) end; cancel the writers still waiting."""
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    if tasks:
        _, pending = await asyncio.wait(tasks, timeout=1.0)
        for t in pending:
            t.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


@pytest.fixture
def aio_loop():
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True, name="test-asyncio")
    thread.start()
    sockets: list[socket.socket] = []
    yield loop, thread, sockets
    asyncio.run_coroutine_threadsafe(_settle(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()
    for s in sockets:
        s.close()


def make_aio(kind: str, aio_loop):
    """A started asyncio connection of ``kind`` on a socket pair: (connection, the peer's socket)."""
    loop, thread, sockets = aio_loop
    cls = AsyncioConnection if kind == "driver" else TimerQueueAsyncioConnection
    conn = cls.__new__(cls)
    Connection.__init__(conn, "127.0.0.1")
    conn._loop, conn._loop_thread = loop, thread
    mine, peer = socket.socketpair()
    sockets += [mine, peer]
    mine.setblocking(False)
    conn._socket = mine
    # what scylla-driver's __init__ also sets (no TLS here); cassandra-driver's class ignores them
    conn._using_ssl, conn._transport, conn._protocol, conn._ssl_ready = False, None, None, None
    conn._background_tasks = set()
    if kind == "driver":
        async def queues():
            return asyncio.Queue(), asyncio.Lock()
        conn._write_queue, conn._write_queue_lock = asyncio.run_coroutine_threadsafe(queues(), loop).result(5)
    else:
        conn._out, conn._out_lock, conn._writes_ready = deque(), threading.Lock(), CountingEvent()
    conn._read_watcher = None
    conn._write_watcher = asyncio.run_coroutine_threadsafe(conn.handle_write(), loop)
    return conn, peer


def read_exactly(peer: socket.socket, n: int) -> bytes:
    peer.settimeout(10)
    got = bytearray()
    while len(got) < n:
        chunk = peer.recv(n - len(got))
        assert chunk, "the connection's socket closed early"
        got += chunk
    return bytes(got)


@pytest.mark.parametrize("kind", CLASSES)
def test_asyncio_bytes_in_order_from_many_threads(aio_loop, kind):
    conn, peer = make_aio(kind, aio_loop)
    per_thread, threads = 300, 4
    big = bytes(range(256)) * 1200  # larger than one write

    def pusher(t: int) -> None:
        for i in range(per_thread):
            conn.push(t.to_bytes(1, "big") + i.to_bytes(4, "big"))

    conn.push(big)
    workers = [threading.Thread(target=pusher, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    got = read_exactly(peer, len(big) + 5 * per_thread * threads)
    assert got[:len(big)] == big
    rest = got[len(big):]
    for t in range(threads):
        mine = [rest[i:i + 5] for i in range(0, len(rest), 5) if rest[i] == t]
        assert mine == [t.to_bytes(1, "big") + i.to_bytes(4, "big") for i in range(per_thread)]
    conn.close()


def test_asyncio_one_wake_up_while_the_loop_is_busy(aio_loop):
    loop = aio_loop[0]
    conn, peer = make_aio("ours", aio_loop)
    busy, release = threading.Event(), threading.Event()
    loop.call_soon_threadsafe(lambda: (busy.set(), release.wait(10)))
    assert busy.wait(5)
    msgs = messages(200)
    workers = [threading.Thread(target=lambda part=msgs[t::4]: [conn.push(m) for m in part]) for t in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    release.set()
    got = read_exactly(peer, sum(map(len, msgs)))
    assert sorted(got[i:i + 104] for i in range(0, len(got), 104)) == sorted(msgs)
    assert conn._writes_ready.sets == 1
    conn.push(b"again")
    assert read_exactly(peer, 5) == b"again"
    asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop).result(5)  # the loop ran what push asked before
    assert conn._writes_ready.sets == 2
    conn.close()


def test_asyncio_a_socket_error_defuncts_as_the_driver(aio_loop):
    outcomes = {}
    for kind in CLASSES:
        conn, peer = make_aio(kind, aio_loop)
        seen = _requests_errors(conn)
        peer.close()
        deadline = time.monotonic() + 10
        while not conn.is_defunct and time.monotonic() < deadline:
            conn.push(bytes(1 << 16))
            time.sleep(0.01)
        # the loop's thread marks the connection defunct, then errors its requests: wait for both
        while len(seen) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert conn.is_defunct and conn.is_closed
        assert len(seen) == 2 and all(isinstance(e, ConnectionShutdown) for e in seen)
        outcomes[kind] = (type(conn.last_error), conn.last_error.args, [str(e) for e in seen])
    assert outcomes["ours"] == outcomes["driver"]


class TransportWrites(AsyncioConnection):
    """A driver asyncio connection that writes TLS through a transport of its own (scylla-driver's
    with ``ssl_context``), its ``push`` and writer recorded."""

    _using_ssl = True

    def __init__(self) -> None:
        self.pushed: list[bytes] = []
        self.writers = 0

    def push(self, data: bytes) -> None:
        self.pushed.append(data)

    async def handle_write(self) -> None:
        self.writers += 1


def test_asyncio_writes_through_the_drivers_tls_transport_are_the_drivers():
    from pyfactories.connection._writes_py import CoalescedAsyncioWrites

    Ours = type("Ours", (CoalescedAsyncioWrites, TransportWrites), {})
    conn = Ours()
    conn._out = deque()
    conn.push(b"request")
    asyncio.run(conn.handle_write())
    assert (conn.pushed, conn.writers, list(conn._out)) == ([b"request"], 1, [])
    assert TimerQueueAsyncioConnection._writes_through_transport.fget(make_plain()) is False


def make_plain():
    """Our asyncio connection as cassandra-driver's (and scylla-driver's without TLS) sets it up."""
    conn = TimerQueueAsyncioConnection.__new__(TimerQueueAsyncioConnection)
    Connection.__init__(conn, "127.0.0.1")
    if hasattr(AsyncioConnection, "_setup_ssl_and_run"):  # scylla-driver's __init__ says whether it uses TLS
        conn._using_ssl = False
    return conn


class CountedNotifier:
    """A libev loop's ``_notifier``: its ``send`` (``ev_async_send``) counted."""

    def __init__(self) -> None:
        self.sent = 0

    def send(self) -> None:
        self.sent += 1


@pytest.fixture(params=["c", "py"])
def wake_loop(request):
    """``wake_loop``, compiled (``c``) and its pure-Python twin (``py``)."""
    from pyfactories.connection import _writes

    return {"c": _writes.wake_loop, "py": _writes_py.wake_loop}[request.param]


def _woken(wake, loop) -> int:
    before = loop._notifier.sent
    wake(loop)
    return loop._notifier.sent - before


def test_the_drivers_loop_is_woken_from_other_threads_only(wake_loop):
    """The driver's own ``LibevLoop`` and ``Thread``: woken as its ``notify`` wakes it (its notifier's
    ``send``), unless on the loop's thread (the thread's ``ident``, whatever it says)."""
    loop = libevreactor.LibevLoop()
    loop._notifier = CountedNotifier()
    assert _woken(wake_loop, loop) == 1  # no loop thread yet
    other = threading.Thread(target=lambda: None)
    other.start()
    other.join()
    loop._thread = other
    assert _woken(wake_loop, loop) == 1
    other._ident = threading.get_ident()  # (what the ``ident`` property reads)
    assert _woken(wake_loop, loop) == 0
    loop._thread = threading.current_thread()  # the main thread's class is not exactly ``Thread``
    assert _woken(wake_loop, loop) == 0


def test_a_replaced_notify_or_ident_is_called(wake_loop, monkeypatch):
    loop = libevreactor.LibevLoop()
    loop._notifier = CountedNotifier()
    notified = []
    monkeypatch.setattr(libevreactor.LibevLoop, "notify", lambda self: notified.append(self))
    wake_loop(loop)
    assert notified == [loop] and loop._notifier.sent == 0
    other = threading.Thread(target=lambda: None)
    monkeypatch.setattr(threading.Thread, "ident", property(lambda self: threading.get_ident()))
    loop._thread = other
    wake_loop(loop)
    assert notified == [loop]  # its ``ident`` says it is this thread: nothing to wake
