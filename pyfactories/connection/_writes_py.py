"""Writes coalesced per event-loop iteration for the driver's libev and asyncio connections.

The driver's ``LibevConnection.push`` splits a request into 4 KiB chunks, appends them to the
connection's ``deque`` and wakes the event loop for every request (``ev_async_send``: an eventfd
write and one more loop iteration whenever the loop is not already woken), and its ``handle_write``
gives every chunk a ``send()`` of its own. :class:`CoalescedWrites` keeps the driver's queue (the
``deque`` under ``_deque_lock``, which the driver's loop reads in ``_loop_will_run`` to start and stop
the connection's write watcher) and changes only:

* ``push``: the request goes to the queue whole; the loop is woken only when the queue goes from
  empty to non-empty. A push that finds the queue non-empty needs no wake-up: the push that filled
  it woke the loop (whose prepare watcher then starts the write watcher), or the queue holds the
  unsent rest of a write, and then the write watcher is running (the driver's loop stops it only
  when the queue is empty);
* ``push`` of a request on an idle connection (no other request in flight, nothing queued) from
  another thread sends it from that thread at once, on a plain socket: no wake-up of the loop, no write
  watcher started and stopped; what the socket did not take is queued as any request is;
* ``push`` on the loop's thread (a response's callback sending the next request) wakes nothing:
  the loop's prepare watcher sees the queue before the loop blocks; and ``handle_read`` writes what
  the callbacks of the responses it read queued before it returns, in the same loop iteration (no
  write watcher started, no second iteration), unless the socket would block;
* ``handle_write``: everything queued, up to :attr:`CoalescedWrites.max_write_size` bytes, goes out
  in one ``send()`` of the joined bytes; a request larger than that is sent in slices of it (views,
  not copies). The unsent rest of a write goes back to the head of the queue, so bytes leave in the
  order they were pushed. One call writes at most :attr:`~CoalescedWrites.max_writes_per_event`
  times, then lets the loop read before it writes again (the write watcher stays on while the queue
  is not empty).

Errors, flags and closing are the driver's: ``EV_ERROR`` is handled by the driver's own
``handle_write``; a send that would block puts the data back and marks the socket not writable (so
``send_msg`` raises the driver's ``ConnectionBusy`` until the queue drains); any other socket error
defuncts the connection with that error; a TLS socket that wants to read or write gets the same
bytes again, alone, on the next try (OpenSSL's rule for retried writes); ``close()`` is the driver's,
and a write event after it writes nothing (scylla-driver's ``close()`` leaves the socket open until
its loop's next turn; cassandra-driver's closes it, so a write would fail and change nothing).
"""

from __future__ import annotations

import asyncio
import logging
import operator
import socket
import ssl
import threading
from collections import deque
from typing import Any

from cassandra.connection import NONBLOCKING

from .._impl import COMPILED

try:
    from cassandra.io import libevreactor
except Exception:  # the driver raises DependencyException without its libev extension
    libevreactor = None  # and the mixin is not used

log = logging.getLogger("pyfactories.connection")
_SSL_RETRY = (ssl.SSL_ERROR_WANT_READ, ssl.SSL_ERROR_WANT_WRITE)


def push(self: Any, data: bytes) -> None:
    """``CoalescedWrites.push``: queue a request's bytes; wake the loop only when the queue was
    empty and this is not the loop's thread. A request sent on an idle connection from another thread
    is sent from that thread at once (:func:`sends_now`), and only what the socket did not take is
    queued; a send that fails with anything but "would block" defuncts the connection, as the loop's
    write does."""
    failed = None
    loop = libevreactor._global_loop
    with self._deque_lock:
        queue = self.deque
        wake = not queue
        if wake and sends_now(self, loop):
            left = send_now(self, data)
            if left is None:
                return
            if isinstance(left, OSError):
                failed = left
            else:
                queue.append(left)
        else:
            queue.append(data)
    if failed is not None:
        self.defunct(failed)
    elif wake:
        wake_loop(loop)


_Socket = socket.socket  # the class as imported (the compiled module's too)


def sends_now(self: Any, loop: Any) -> bool:
    """Whether a request pushed now on this thread is sent from it (the caller holds ``_deque_lock`` and
    the queue is empty, so no bytes are waiting or being written: the loop's writes hold the lock from
    taking bytes to putting back what was not sent). Only one request at a time (the connection has no
    other in flight: with more, they are joined in one write on the loop), not on the loop's thread
    (whose writes are joined at the end of its read), on a plain non-blocking socket (not TLS, whose
    reads and writes must not run on two threads at once) that is open and writable."""
    thread = getattr(loop, "_thread", None)
    if thread is None or thread.ident == threading.get_ident():
        return False
    sock = self._socket
    return (type(sock) is _Socket and sock.gettimeout() == 0.0 and self.in_flight <= 1
            and self._socket_writable and not self._write_again and not self.is_closed and not self.is_defunct)


def send_now(self: Any, data: bytes) -> Any:
    """Send ``data`` on the socket from this thread (the caller holds ``_deque_lock``): None if all of it
    went, what is left to queue if not (all of it when the send would block: the loop's write then
    waits for the socket), or the ``OSError`` the send raised otherwise (the connection is then
    defunct with it, as the loop's write would make it)."""
    try:
        sent = self._socket.send(data)
    except OSError as err:
        if err.args and err.args[0] in NONBLOCKING:
            return data
        return err
    if sent >= len(data):
        return None
    return memoryview(data)[sent:] if sent > 0 else data


def wake_loop(loop: Any) -> None:
    """``loop.notify()`` (the driver's libev loop: an ``ev_async_send``), unless called on the loop's
    thread, whose prepare watcher sees what was queued before the loop blocks."""
    thread = loop._thread
    if thread is None or thread.ident != threading.get_ident():
        loop.notify()


def take(self: Any, cap: int) -> Any:
    """``CoalescedWrites._take``: the next bytes to write (caller holds ``_deque_lock``; the queue
    is not empty): the head, or the head and what follows it joined, up to ``cap`` bytes."""
    cap = operator.index(cap)  # an integer (a float is a TypeError), as the compiled one takes it
    queue = self.deque
    data = queue.popleft()
    if not queue or self._write_again or len(data) >= cap:
        return data
    size = len(data)
    parts = [data]
    for nxt in queue:
        size += len(nxt)
        if size > cap:
            break
        parts.append(nxt)
    for _ in range(len(parts) - 1):
        queue.popleft()
    return b"".join(parts) if len(parts) > 1 else data


if COMPILED:  # the same steps compiled
    from ._writes import push as _push, take as _take_next, wake_loop as _wake_loop
else:
    _push, _take_next, _wake_loop = push, take, wake_loop



class CoalescedWrites:
    """A mixin for the driver's ``LibevConnection`` (its ``deque``, ``_deque_lock``, ``_socket`` and
    ``_socket_writable``, and the module's current ``_global_loop``)."""

    #: the most bytes one ``send()`` is given
    max_write_size = 256 * 1024
    #: the most ``send()`` calls one write event makes before the loop gets a turn
    max_writes_per_event = 4
    #: a TLS write that wanted to read or write: its bytes go again, alone and the same
    _write_again = False

    push = _push

    def handle_read(self, watcher: Any, revents: int, errno: int | None = None) -> None:
        super().handle_read(watcher, revents, errno)  # type: ignore[misc]
        if self.deque and not self.is_closed:  # type: ignore[attr-defined]
            self._write_queued()  # the requests the responses' callbacks sent, in this loop iteration

    _take = _take_next

    def handle_write(self, watcher: Any, revents: int, errno: int | None = None) -> None:
        if self.is_closed:  # type: ignore[attr-defined]
            return  # scylla-driver's close() leaves the socket to its loop, and its handle_write stops here
        if revents & libevreactor.libev.EV_ERROR:
            super().handle_write(watcher, revents, errno)  # type: ignore[misc]
            return
        self._write_queued()

    def _write_queued(self) -> None:
        # From taking bytes to putting back what was not sent, under the queue's lock: a push that finds
        # the queue empty knows that no bytes wait, and may send its own (push).
        cap, lock, queue = self.max_write_size, self._deque_lock, self.deque
        for _ in range(self.max_writes_per_event):
            failed = None
            with lock:
                if not queue:
                    if not self._socket_writable:
                        self._socket_writable = True
                    return
                data = self._take(cap)
                try:
                    sent = self._socket.send(data if len(data) <= cap else memoryview(data)[:cap])
                except socket.error as err:
                    code = err.args[0]
                    if code in NONBLOCKING or code in _SSL_RETRY:
                        if code in NONBLOCKING:
                            self._socket_writable = False
                        else:
                            self._write_again = True
                        queue.appendleft(data)
                        return
                    failed = err
                else:
                    self._write_again = False
                    if sent < len(data):
                        queue.appendleft(memoryview(data)[sent:])
                        if sent == 0:  # as the driver: taken for "would block"
                            self._socket_writable = False
                            return
            if failed is not None:
                self.defunct(failed)  # type: ignore[attr-defined]
                return


class CoalescedAsyncioWrites:
    """The same for the driver's ``AsyncioConnection``, whose ``push`` schedules a coroutine (a
    task, and a wake-up of the loop from another thread) per request, and whose writer sends each
    4 KiB chunk with its own ``sock_sendall``. Here ``push`` appends to a queue of ours and wakes
    the writer (``call_soon_threadsafe``, or directly on the loop's thread) only when the queue was
    empty; the writer (the driver's ``handle_write`` task, replaced) sends what the queue holds, up
    to ``max_write_size`` bytes joined, with one ``sock_sendall``. A socket error defuncts the
    connection as the driver's writer does; ``close()`` cancels the writer as the driver's does. A
    connection whose driver writes TLS through an asyncio transport (scylla-driver's) keeps the
    driver's ``push`` and writer."""

    max_write_size = CoalescedWrites.max_write_size

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._out: deque = deque()
        self._out_lock = threading.Lock()
        self._writes_ready = asyncio.Event()  # set on the loop's thread only
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]

    @property
    def _writes_through_transport(self) -> bool:
        """scylla-driver's connection with TLS writes through the asyncio transport it opens after
        connecting (``_using_ssl``), not the socket: then its own ``push`` and writer are used."""
        return getattr(self, "_using_ssl", False)

    def push(self, data: bytes) -> None:
        if self._writes_through_transport:
            super().push(data)  # type: ignore[misc]
            return
        with self._out_lock:
            wake = not self._out
            self._out.append(data)
        if wake:
            if self._loop_thread.ident == threading.get_ident():  # type: ignore[attr-defined]
                self._writes_ready.set()
            else:
                self._loop.call_soon_threadsafe(self._writes_ready.set)  # type: ignore[attr-defined]

    def _take_out(self) -> Any:
        """Up to ``max_write_size`` bytes of the queue joined (one request if it alone is larger);
        None when the queue is empty."""
        cap, out = self.max_write_size, self._out
        with self._out_lock:
            if not out:
                return None
            parts = [out.popleft()]
            size = len(parts[0])
            while out and size + len(out[0]) <= cap:
                size += len(out[0])
                parts.append(out.popleft())
        return b"".join(parts) if len(parts) > 1 else parts[0]

    async def handle_write(self) -> None:
        if self._writes_through_transport:
            await super().handle_write()  # type: ignore[misc]
            return
        ready, loop = self._writes_ready, self._loop  # type: ignore[attr-defined]
        while True:
            try:
                await ready.wait()
                ready.clear()  # before draining: a push that finds the queue empty from now on sets it again
                while (data := self._take_out()) is not None:
                    await loop.sock_sendall(self._socket, data)  # type: ignore[attr-defined]
            except socket.error as err:
                log.debug("Exception in send for %s: %s", self, err)
                self.defunct(err)  # type: ignore[attr-defined]
                return
            except asyncio.CancelledError:
                return
