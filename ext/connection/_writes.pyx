# cython: language_level=3
"""The coalesced write queue's per-request steps in C: :func:`pyfactories.connection._writes_py.push`,
:func:`pyfactories.connection._writes_py.take`, :func:`pyfactories.connection._writes_py.wake_loop`,
:func:`~pyfactories.connection._writes_py.sends_now` and :func:`~pyfactories.connection._writes_py.send_now` (their
pure-Python twins, which document them), the first two methods of
:class:`pyfactories.connection._writes_py.CoalescedWrites`."""

from cpython.number cimport PyNumber_AsSsize_t
from cpython.pythread cimport PyThread_get_thread_ident

import socket
import threading

from cassandra.connection import NONBLOCKING

from as_imported cimport steps as _steps, unchanged as _unchanged

try:
    from cassandra.io import libevreactor
except Exception:  # the driver raises DependencyException without its libev extension
    libevreactor = None  # and the mixin is not used


def push(self, data):
    """Queue a request's bytes; wake the loop only when the queue was empty and this is not the
    loop's thread; on an idle connection, from another thread, send them from it."""
    cdef bint wake
    failed = None
    loop = libevreactor._global_loop
    lock = self._deque_lock
    lock.acquire()
    try:
        queue = self.deque  # read under the lock, as the twin does
        wake = not queue
        if wake and _sends_now(self, loop):
            left = _send_now(self, data)
            if left is None:
                return
            if isinstance(left, OSError):
                failed = left
            else:
                queue.append(left)
        else:
            queue.append(data)
    finally:
        lock.release()
    if failed is not None:
        self.defunct(failed)  # as the loop's write does (outside the lock)
    elif wake:
        _wake_loop(loop)


cdef object _Thread = threading.Thread
cdef tuple _THREAD_IDENT = _steps(((_Thread, "ident"),))  # the property, as imported
cdef object _LibevLoop = None if libevreactor is None else libevreactor.LibevLoop
cdef tuple _LOOP_NOTIFY = _steps(((_LibevLoop, "notify"),))


cdef void _wake_loop(loop) except *:
    # The driver's own Thread and LibevLoop are read and woken without the Python code of the
    # ``ident`` property and of ``notify`` (what they run: ``_ident``, ``_notifier.send()``).
    if _on_loops_thread(loop):
        return  # on the loop's thread its prepare watcher sees the queue before the loop blocks
    if type(loop) is _LibevLoop and _unchanged(_LOOP_NOTIFY):
        loop._notifier.send()
    else:
        loop.notify()


def wake_loop(loop):
    """:func:`pyfactories.connection._writes_py.wake_loop`."""
    _wake_loop(loop)


cdef bint _on_loops_thread(loop) except -1:
    """Whether this is the loop's thread (the driver's own Thread read without its ``ident``'s Python)."""
    thread = loop._thread
    if thread is None:
        return False
    if type(thread) is _Thread and _unchanged(_THREAD_IDENT):
        ident = thread._ident
    else:
        ident = thread.ident
    return not (ident != PyThread_get_thread_ident())


cdef object _Socket = socket.socket


cdef bint _sends_now(self, loop) except -1:
    """:func:`pyfactories.connection._writes_py.sends_now`."""
    if loop is None or getattr(loop, "_thread", None) is None or _on_loops_thread(loop):
        return False
    sock = self._socket
    return (type(sock) is _Socket and sock.gettimeout() == 0.0 and self.in_flight <= 1
            and self._socket_writable and not self._write_again and not self.is_closed and not self.is_defunct)


cdef tuple _NONBLOCKING = tuple(NONBLOCKING)


cdef object _send_now(self, data):
    """:func:`pyfactories.connection._writes_py.send_now`."""
    try:
        sent = self._socket.send(data)
    except OSError as err:
        if err.args and err.args[0] in _NONBLOCKING:
            return data
        return err
    if sent >= len(data):
        return None
    return memoryview(data)[sent:] if sent > 0 else data


def sends_now(self, loop):
    """:func:`pyfactories.connection._writes_py.sends_now`."""
    return _sends_now(self, loop)


def send_now(self, data):
    """:func:`pyfactories.connection._writes_py.send_now`."""
    return _send_now(self, data)


def take(self, cap):
    """The next bytes to write (caller holds ``_deque_lock``; the queue is not empty): the head,
    or the head and what follows it joined, up to ``cap`` bytes. ``cap`` is an integer
    (``__index__``; a float is the twin's ``TypeError``); one beyond the C range is the twin's (whose
    sums of lengths, which an item's ``len`` can make as large as it likes, are unbounded); lengths
    are summed here without overflow, whatever an item's ``len`` says."""
    cdef Py_ssize_t limit
    try:
        limit = PyNumber_AsSsize_t(cap, OverflowError)  # a float raises TypeError
    except OverflowError:
        from pyfactories.connection._writes_py import take as twin_take  # here: _writes imports this module

        return twin_take(self, cap)
    queue = self.deque
    data = queue.popleft()
    if not queue or self._write_again or len(data) >= limit:
        return data
    cdef Py_ssize_t size = len(data), n
    cdef list parts = [data]
    for nxt in queue:
        n = len(nxt)
        if n > limit - size:  # size + n > limit (size < limit here: no overflow)
            break
        size += n
        parts.append(nxt)
    cdef Py_ssize_t i
    popleft = queue.popleft
    for i in range(len(parts) - 1):
        popleft()
    return b"".join(parts) if len(parts) > 1 else data
