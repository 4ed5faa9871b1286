# cython: language_level=3
"""The request timer service in C: :mod:`pyfactories.connection._timers_py` (which documents the algorithm and is
its pure-Python twin, used under ``PYFACTORIES_NO_EXTENSIONS=1``) with the same classes, methods,
errors and order of callbacks.

A timer is added and cancelled once per request, on the thread that sends it and on the event
loop's thread: here both are a few C calls under one lock (a queue is still an ``OrderedDict``
keyed by the timer, for O(1) removal anywhere and O(1) removal from the front).
"""

cimport cython
cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void *op)
from cpython.pythread cimport (
    PyThread_allocate_lock, PyThread_free_lock, PyThread_acquire_lock, PyThread_release_lock,
    PyThread_type_lock, WAIT_LOCK,
)
from cpython.tuple cimport PyTuple_GET_SIZE
from libc.math cimport ceil, isnan

import heapq
import logging
import math
import time
from collections import OrderedDict

from pyfactories.connection._timers_py import MAX_BUCKET

RESOLUTION_S = 0.01
INF = math.inf

cdef double _INF = math.inf
cdef double _MAX_BUCKET = MAX_BUCKET
cdef object _heappush = heapq.heappush
cdef object _heappop = heapq.heappop

log = logging.getLogger("pyfactories.connection")


@cython.final
@cython.auto_pickle(False)  # its timers are the service's own
cdef class _Queue:
    """Timers of one timeout bucket, oldest first; ``last`` is the latest deadline it was given."""
    cdef object timers  # OrderedDict: TimerHandle -> None (not exposed; its entries are checked when read)
    cdef readonly long long bucket
    cdef double last
    cdef bint scheduled  # whether the heap holds an entry for this queue

    def __cinit__(self, long long bucket):
        self.timers = OrderedDict()
        self.bucket = bucket
        self.last = -_INF
        self.scheduled = False

    def __len__(self):
        return len(self.timers)


cdef inline tuple _entry(e):
    """A heap entry, checked: ``(deadline, bucket)`` (the heap is the C code's, but ``gc`` can reach it)."""
    if type(e) is not tuple or PyTuple_GET_SIZE(e) != 2:
        raise TypeError("pyfactories: a timer heap entry is not (deadline, bucket): changed from Python")
    return <tuple>e


@cython.final
@cython.auto_pickle(False)  # no state from Python: its queue and service are the service's own
cdef class TimerHandle:
    """What ``create_timer`` returns: ``cancel()`` is all the driver calls on it.

    Once cancelled or fired it lets go of its service and callback, and leaves the cyclic GC: nothing can
    be stored in it from Python, so it can lead nowhere (a finished request future keeps its timer)."""
    cdef TimerService _service
    cdef _Queue _queue
    cdef readonly double deadline
    cdef readonly object callback

    cdef inline void _done(self):
        """Fired or cancelled: no references left, none to come."""
        self._service = None
        self.callback = None
        PyObject_GC_UnTrack(<void *>self)

    @property
    def pending(self):
        """Neither fired nor cancelled yet."""
        return self._queue is not None

    def cancel(self):
        cdef TimerService service = self._service  # owned here: a fire() meanwhile lets go of the handle's
        if self._queue is not None and service is not None:
            service._cancel(self)

    def __repr__(self):
        state = "pending" if self._queue is not None else "done"
        return f"<TimerHandle {state} deadline={self.deadline:.3f}>"


@cython.auto_pickle(False)
cdef class _Lock:
    """A plain lock held by C code only (no Python context manager per timer)."""
    cdef PyThread_type_lock lock

    def __cinit__(self):
        self.lock = PyThread_allocate_lock()
        if self.lock is NULL:
            raise MemoryError("no lock for the timer service")

    def __dealloc__(self):
        if self.lock is not NULL:
            PyThread_free_lock(self.lock)

    cdef inline void acquire(self):
        if not PyThread_acquire_lock(self.lock, 0):  # taken: wait for it without the GIL
            with nogil:
                PyThread_acquire_lock(self.lock, WAIT_LOCK)

    cdef inline void release(self):
        PyThread_release_lock(self.lock)


@cython.auto_pickle(False)
cdef class TimerService:
    """Timers of one reactor loop. ``wake(deadline)`` asks the loop to wake up by ``deadline``
    (called outside the service's lock, from whichever thread added the timer); ``clock`` is the
    clock deadlines are measured on (the reactor's own)."""
    cdef object _wake, _clock
    cdef double _resolution
    cdef dict _queues  # bucket -> _Queue
    cdef list _heap  # heap of (deadline, bucket): C code only, under the lock (``_heads`` is a copy)
    cdef dict __dict__  # a tool may replace a method on one service (the profiler times its fire)
    cdef _Lock _lock
    cdef bint _ready  # __init__ ran
    #: the earliest wake-up requested from the loop (INF: none); no pending deadline is earlier
    cdef public double wake_at
    #: timers neither fired nor cancelled
    cdef public Py_ssize_t live

    def __cinit__(self, *args, **kwargs):
        # made once, before any method can run (a service made with __new__ alone, or initialised
        # again, never has its lock freed or missing under a thread waiting for it)
        self._lock = _Lock()
        self._queues = {}
        self._heap = []
        self.wake_at = _INF
        self._ready = False

    def __init__(self, wake, clock=time.monotonic, resolution=RESOLUTION_S):
        if not resolution > 0:
            raise ValueError(f"resolution must be a positive number of seconds, not {resolution!r}")
        cdef double seconds = resolution
        self._lock.acquire()
        try:
            self._wake = wake
            self._clock = clock
            self._resolution = seconds
            self._queues = {}
            self._heap = []
            self.wake_at = _INF
            self.live = 0
            self._ready = True
        finally:
            self._lock.release()

    cdef inline int _check_ready(self) except -1:
        if not self._ready:  # the twin has no attributes then: the same error
            raise AttributeError("TimerService.__init__ was not called: the service has no clock, queues or lock")
        return 0

    def add(self, timeout, callback):
        """Call ``callback()`` on the loop once ``timeout`` seconds have passed, unless cancelled."""
        self._check_ready()
        cdef double t = timeout
        if not t >= 0:  # negative (time already up) fires at once; NaN is refused
            if isnan(t):
                raise ValueError("timeout must be a number of seconds, not NaN")
            t = 0.0
        cdef double q = t / self._resolution
        # the twin's bucket_of: past the last bucket (an infinite timeout too), the last one
        cdef long long bucket = <long long>(ceil(q) if q <= _MAX_BUCKET else _MAX_BUCKET)
        cdef double deadline = <double>self._clock() + t
        cdef TimerHandle handle = TimerHandle.__new__(TimerHandle)
        cdef _Queue queue
        cdef bint wake
        handle._service = self
        handle.callback = callback
        self._lock.acquire()
        try:
            found = self._queues.get(bucket)
            if found is None:
                queue = _Queue(bucket)
                self._queues[bucket] = queue
            elif type(found) is _Queue:
                queue = <_Queue>found
            else:
                raise TypeError("pyfactories: a timer queue is not one: changed from Python")
            if deadline < queue.last:
                deadline = queue.last
            queue.last = deadline
            handle._queue = queue
            handle.deadline = deadline
            queue.timers[handle] = None
            self.live += 1
            if not queue.scheduled:
                queue.scheduled = True
                _heappush(self._heap, (deadline, bucket))
            wake = deadline < self.wake_at
            if wake:
                self.wake_at = deadline
        finally:
            self._lock.release()
        if wake:
            self._wake(deadline)
        return handle

    cdef _cancel(self, TimerHandle handle):
        self._lock.acquire()
        try:
            queue = handle._queue
            if queue is None:
                return
            del queue.timers[handle]
            handle._queue = None
            self.live -= 1
        finally:
            self._lock.release()
        handle._done()

    def fire(self, now=None):
        """Run the callbacks of every timer due by ``now`` (default: the clock), in deadline order
        per queue; return :attr:`wake_at`, the next wake-up the loop needs (INF: none). A callback
        that raises is logged and the others still run."""
        self._check_ready()
        cdef double t = self._clock() if now is None else now
        cdef list due = []
        cdef list heads = self._heap
        cdef _Queue queue
        cdef TimerHandle head
        self._lock.acquire()
        try:
            while heads and _entry(heads[0])[0] <= t:
                bucket = _entry(_heappop(heads))[1]
                found = self._queues[bucket]
                if type(found) is not _Queue:
                    raise TypeError("pyfactories: a timer queue is not one: changed from Python")
                queue = <_Queue>found
                timers = queue.timers
                while timers:
                    found = next(iter(timers))
                    if type(found) is not TimerHandle:
                        raise TypeError("pyfactories: a queued timer is not a TimerHandle: changed from Python")
                    head = <TimerHandle>found
                    if head.deadline > t:
                        _heappush(heads, (head.deadline, bucket))
                        break
                    timers.popitem(last=False)
                    head._queue = None
                    due.append(head)
                else:
                    queue.scheduled = False
                    del self._queues[bucket]
            self.live -= len(due)
            self.wake_at = _entry(heads[0])[0] if heads else _INF
        finally:
            self._lock.release()
        for head in due:
            callback = head.callback
            head._done()
            try:
                callback()
            except Exception:
                log.exception("request timer callback %r raised; the other timers go on", callback)
        return self.wake_at

    @property
    def _heads(self):
        """The heap of ``(deadline, bucket)``, one entry per queue: a copy (the service's own is
        read and changed by C code under its lock only)."""
        self._check_ready()
        self._lock.acquire()
        try:
            return list(self._heap)
        finally:
            self._lock.release()

    def idle(self):
        """With no timer pending, forget the wake-up requested (the loop may then stop its reactor
        timer, and the next timer added asks for a new one); True if idle."""
        self._check_ready()
        self._lock.acquire()
        try:
            if self.live:
                return False
            self.wake_at = _INF
            return True
        finally:
            self._lock.release()

    def queued(self):
        """Timers held in the queues (pending ones: cancelled and fired ones are gone)."""
        self._check_ready()
        self._lock.acquire()
        try:
            return sum([len(q) for q in self._queues.values()])
        finally:
            self._lock.release()

    def buckets(self):
        """The timeout buckets that have a queue now, in ``resolution`` units."""
        self._check_ready()
        self._lock.acquire()
        try:
            return sorted(self._queues)
        finally:
            self._lock.release()


@cython.final
cdef class CurrentTimers:
    """``pyfactories.connection._timers_py.CurrentTimers``."""

    cdef object _reactor, _made
    cdef tuple _current  # (loop, service): replaced as one object

    def __init__(self, reactor, made):
        self._reactor, self._made = reactor, made
        self._current = None

    def create_timer(self, cls, timeout, callback):
        cdef tuple current = self._current
        if current is None or current[0] is not self._reactor._global_loop:
            timers = self._made()
            current = (timers.loop, timers.service)
            self._current = current
        service = current[1]
        if type(service) is TimerService:
            return (<TimerService>service).add(timeout, callback)
        return service.add(timeout, callback)
