"""Writes coalesced per event-loop iteration for the driver's libev connection.

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
bytes again, alone, on the next try (OpenSSL's rule for retried writes); ``close()`` is the driver's.
"""

from __future__ import annotations

import socket
import ssl
from typing import Any

from cassandra.connection import NONBLOCKING

try:
    from cassandra.io import libevreactor
except Exception:  # the driver raises DependencyException without its libev extension
    libevreactor = None  # and the mixin is not used

_SSL_RETRY = (ssl.SSL_ERROR_WANT_READ, ssl.SSL_ERROR_WANT_WRITE)


class CoalescedWrites:
    """A mixin for the driver's ``LibevConnection`` (its ``deque``, ``_deque_lock``, ``_socket`` and
    ``_socket_writable``, and the module's current ``_global_loop``)."""

    #: the most bytes one ``send()`` is given
    max_write_size = 256 * 1024
    #: the most ``send()`` calls one write event makes before the loop gets a turn
    max_writes_per_event = 4
    #: a TLS write that wanted to read or write: its bytes go again, alone and the same
    _write_again = False

    def push(self, data: bytes) -> None:
        with self._deque_lock:
            queue = self.deque
            wake = not queue
            queue.append(data)
        if wake:
            libevreactor._global_loop.notify()

    def _take(self, cap: int) -> Any:
        """The next bytes to write (caller holds ``_deque_lock``; the queue is not empty): the head,
        or the head and what follows it joined, up to ``cap`` bytes."""
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

    def handle_write(self, watcher: Any, revents: int, errno: int | None = None) -> None:
        if revents & libevreactor.libev.EV_ERROR:
            super().handle_write(watcher, revents, errno)  # type: ignore[misc]
            return
        cap, lock, queue = self.max_write_size, self._deque_lock, self.deque
        for _ in range(self.max_writes_per_event):
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
                    with lock:
                        queue.appendleft(data)
                else:
                    self.defunct(err)  # type: ignore[attr-defined]
                return
            self._write_again = False
            if sent < len(data):
                with lock:
                    queue.appendleft(memoryview(data)[sent:])
                if sent == 0:  # as the driver: taken for "would block"
                    self._socket_writable = False
                    return

