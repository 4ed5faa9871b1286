# cython: language_level=3
"""The coalesced write queue's per-request steps in C: :func:`pyfactories._writes.push` and
:func:`pyfactories._writes.take` (their pure-Python twins, which document them), methods of
:class:`pyfactories._writes.CoalescedWrites`."""

from cpython.pythread cimport PyThread_get_thread_ident

try:
    from cassandra.io import libevreactor
except Exception:  # the driver raises DependencyException without its libev extension
    libevreactor = None  # and the mixin is not used


def push(self, data):
    """Queue a request's bytes; wake the loop only when the queue was empty and this is not the
    loop's thread."""
    cdef bint wake
    lock = self._deque_lock
    queue = self.deque
    lock.acquire()
    try:
        wake = not queue
        queue.append(data)
    finally:
        lock.release()
    if wake:
        loop = libevreactor._global_loop
        thread = loop._thread
        if thread is None or thread.ident != PyThread_get_thread_ident():
            loop.notify()  # on the loop's thread its prepare watcher sees the queue before the loop blocks


def take(self, Py_ssize_t cap):
    """The next bytes to write (caller holds ``_deque_lock``; the queue is not empty): the head,
    or the head and what follows it joined, up to ``cap`` bytes."""
    queue = self.deque
    data = queue.popleft()
    if not queue or self._write_again or len(data) >= cap:
        return data
    cdef Py_ssize_t size = len(data)
    cdef list parts = [data]
    for nxt in queue:
        size += len(nxt)
        if size > cap:
            break
        parts.append(nxt)
    cdef Py_ssize_t i
    popleft = queue.popleft
    for i in range(len(parts) - 1):
        popleft()
    return b"".join(parts) if len(parts) > 1 else data
