# cython: language_level=3
"""Awaiting the driver's requests on an asyncio loop: compiled twin of ``pyfactories.aio._aio_py`` (its
docstring is the specification; ``pyfactories.aio`` puts them on a session).

:class:`Waker` is where it differs from the twin: its queue is a list that :meth:`Waker.drain` swaps for
an empty one and then walks in C. The GIL makes both steps atomic: :meth:`Waker.post` reads the list and
appends to it with nothing that could run Python code in between, and the drain makes the empty list
before it reads the full one.
"""

import logging
import weakref
from _thread import allocate_lock
from asyncio import CancelledError, get_running_loop
from functools import partial

from cassandra.cluster import _NOT_SET

log = logging.getLogger("pyfactories.aio")

WAKER_ATTRIBUTE = "_pyfactories_waker"
AWAITER_ATTRIBUTE = "_pyfactories_awaiter"
_wakers = weakref.WeakKeyDictionary()
cdef object _weakref = weakref.ref
cdef object _ReferenceType = weakref.ReferenceType
cdef object _NOTHING = _NOT_SET
cdef object _LockType = type(allocate_lock())


cdef class Waker:
    """``pyfactories.aio._aio_py.Waker``."""

    cdef object _loop  # a weak reference: the loop keeps its waker, never the other way round
    cdef list _pending
    cdef bint _scheduled, _dead
    cdef object __weakref__

    def __init__(self, loop):
        self._loop = _weakref(loop)
        self._pending = []
        self._scheduled = False
        self._dead = False

    def post(self, waiter, value, failed):
        self._post(waiter, value, bool(failed))

    cdef _post(self, waiter, value, bint failed):
        if self._dead:
            return
        item = (waiter, value, failed)
        self._pending.append(item)
        if self._scheduled:
            return
        self._scheduled = True
        loop = self._loop()
        try:
            if loop is None:
                raise RuntimeError("the loop is gone")
            loop.call_soon_threadsafe(self.drain)
        except RuntimeError:  # a closed loop
            self._dead = True
            self._pending = []

    def drain(self):
        cdef list fresh = []
        cdef list batch
        cdef tuple item
        self._scheduled = False  # before the queue is read: a request queued from now on wakes the loop again
        batch = self._pending
        self._pending = fresh
        for item in batch:
            _settle(item[0], item[1], item[2])


cdef _settle(waiter, value, bint failed):
    if waiter.done():
        return
    try:
        if failed:
            waiter.set_exception(value)
        else:
            waiter.set_result(value)
    except Exception as exc:
        if not waiter.done():
            waiter.set_exception(exc)


def settle(waiter, value, failed):
    """``pyfactories.aio._aio_py.settle``."""
    _settle(waiter, value, bool(failed))


cpdef Waker waker_for(loop):
    """``pyfactories.aio._aio_py.waker_for``."""
    waker = getattr(loop, WAKER_ATTRIBUTE, None)
    if type(waker) is Waker:
        return <Waker>waker
    waker = _wakers.get(loop)
    if waker is None:
        waker = Waker(loop)
        try:
            setattr(loop, WAKER_ATTRIBUTE, waker)
        except (AttributeError, TypeError):
            _wakers[loop] = waker
    return <Waker?>waker


cdef class Awaiter:
    """``pyfactories.aio._aio_py.Awaiter``."""

    cdef public object waiters

    def on_result(self, rows, source):
        self._wake(_future_of(source), rows, False)

    def on_error(self, exc, source):
        self._wake(_future_of(source), exc, True)

    def wake(self, future, value, failed):
        self._wake(future, value, bool(failed))

    cdef _wake(self, future, value, bint failed):
        if self.waiters is None or future is None:  # no task awaits it (one that comes finds the outcome)
            return
        if (value is None) if failed else (value is _NOTHING):  # no outcome: the driver's ``add_callback``
            return  # reads it after its lock, and a next page may have been asked for in between
        lock = future._callback_lock
        if type(lock) is _LockType:  # what ``with`` does, without its two bound methods
            lock.acquire()
            try:
                waiters = self._take(future, value, failed)
            finally:
                lock.release()
        else:
            with lock:
                waiters = self._take(future, value, failed)
        if waiters is None:
            return
        for waker, waiter in waiters:
            (<Waker?>waker)._post(waiter, value, failed)

    cdef object _take(self, future, value, bint failed):
        """In the future's lock: the waiters, taken, if ``value`` is still the future's outcome."""
        current = future._final_exception if failed else future._final_result
        if current is not value:
            return None
        waiters = self.waiters
        self.waiters = None  # the next page's awaits add their own
        return waiters


cdef inline object _future_of(source):
    return source() if type(source) is _ReferenceType else source


def future_of(source):
    """``pyfactories.aio._aio_py.future_of``."""
    return _future_of(source)


cdef set _waking_themselves = set()


def wakes_itself(future_class):
    """``pyfactories.aio._aio_py.wakes_itself``."""
    _waking_themselves.add(future_class)


cpdef Awaiter awaiter_of(future):
    """``pyfactories.aio._aio_py.awaiter_of``."""
    if type(future) in _waking_themselves:
        awaiter = getattr(future, AWAITER_ATTRIBUTE, None)
        if type(awaiter) is Awaiter:
            return <Awaiter>awaiter
        awaiter = Awaiter()
        setattr(future, AWAITER_ATTRIBUTE, awaiter)
        return <Awaiter>awaiter
    return _kept_awaiter(future)


_kept = {}  # ``pyfactories.aio._aio_py._kept``
cdef dict _kept_awaiters = _kept


cdef Awaiter _kept_awaiter(future):
    cdef object key = id(future)
    cdef Awaiter awaiter
    entry = _kept_awaiters.get(key)
    if entry is not None and (<tuple?>entry)[0]() is future:
        return <Awaiter?>(<tuple?>entry)[1]
    awaiter = Awaiter()
    try:
        ref = source = _weakref(future, partial(_forget, key))
    except TypeError:  # a future that takes no weak reference: an awaiter for this await only
        source = future
    else:
        entry = _kept_awaiters.setdefault(key, (ref, awaiter))
        if (<tuple?>entry)[1] is not awaiter:
            if (<tuple?>entry)[0]() is future:
                return <Awaiter?>(<tuple?>entry)[1]
            _kept_awaiters[key] = (ref, awaiter)
    future.add_callbacks(awaiter.on_result, awaiter.on_error, callback_args=(source,), errback_args=(source,))
    return awaiter


def _forget(key, ref):
    """``pyfactories.aio._aio_py._forget``."""
    entry = _kept_awaiters.get(key)
    if entry is not None and (<tuple?>entry)[0] is ref:
        del _kept_awaiters[key]


cdef tuple _register(future, Awaiter awaiter, Waker waker, loop):
    """In the future's lock: its result and exception as they are, and an asyncio future of the loop
    that its awaiter (found here for a future that wakes it itself) finishes, if it has neither yet
    (else None), and that awaiter."""
    rows, failure = future._final_result, future._final_exception
    if rows is not _NOTHING or failure is not None:
        return rows, failure, None, awaiter
    if awaiter is None:
        awaiter = awaiter_of(future)
    waiter = loop.create_future()
    if awaiter.waiters is None:
        awaiter.waiters = ((waker, waiter),)
    else:
        awaiter.waiters = (*awaiter.waiters, (waker, waiter))
    return rows, failure, waiter, awaiter


def result_of(future, result_class):
    """``pyfactories.aio._aio_py.result_of``."""
    loop = get_running_loop()
    cdef Waker waker = waker_for(loop)
    cdef Awaiter awaiter = None
    if type(future) not in _waking_themselves:
        awaiter = _kept_awaiter(future)  # (registers a callback: outside the lock)
    lock = future._callback_lock
    if type(lock) is _LockType:  # what ``with`` does, without its two bound methods
        lock.acquire()
        try:
            rows, failure, waiter, awaiter = _register(future, awaiter, waker, loop)
        finally:
            lock.release()
    else:
        with lock:
            rows, failure, waiter, awaiter = _register(future, awaiter, waker, loop)
    if waiter is None:
        if rows is _NOTHING:
            raise failure
        return result_class(future, rows)
    try:
        rows = yield from waiter
    except CancelledError:
        abandon(future, awaiter, waiter)
        raise
    return result_class(future, rows)


def abandon(future, Awaiter awaiter, waiter):
    """``pyfactories.aio._aio_py.abandon``."""
    with future._callback_lock:
        waiters = awaiter.waiters
        if waiters is not None:
            awaiter.waiters = tuple([pair for pair in waiters if pair[1] is not waiter]) or None
        alone = awaiter.waiters is None
        running = future._final_result is _NOTHING and future._final_exception is None
    if running and alone:
        try:
            future.session.cluster.connection_class.create_timer(0, partial(time_out_now, future))
        except Exception:
            log.debug("could not end the cancelled request %r", future, exc_info=True)


def sent_by(callback, future):
    """``pyfactories.aio._aio_py.sent_by``."""
    return (getattr(callback, "future", None) is future
            or getattr(getattr(callback, "func", None), "__self__", None) is future)


def time_out_now(future):
    """``pyfactories.aio._aio_py.time_out_now``."""
    try:
        if future._final_result is not _NOTHING or future._final_exception is not None:
            return
        connection = future._connection
        if connection is None:
            return
        entry = connection._requests.get(future._req_id)
        if entry is None or not sent_by(entry[0], future):
            return
        future._on_timeout()
    except Exception:
        log.debug("could not end the cancelled request %r", future, exc_info=True)


cdef class AwaitableCreate:
    """``pyfactories.aio._aio_py.AwaitableCreate``."""

    cdef readonly object session, future_class, base, driver, previous

    def __init__(self, session, future_class):
        self.session = session
        self.future_class = future_class
        self.base = future_class.__base__
        self.previous = session.__dict__.get("_create_response_future")
        self.driver = session._create_response_future

    def __call__(self, *args, **kwargs):
        future = self.driver(*args, **kwargs)
        if type(future) is self.base:
            future.__class__ = self.future_class
        return future
