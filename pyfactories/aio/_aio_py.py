"""Awaiting the driver's requests on an asyncio loop: the pure-Python twin (and specification) of the
compiled ``pyfactories.aio._aio``.

The driver finishes a request on its own IO thread (or, for a retry, on one of its executor threads);
an asyncio future may only be finished on its loop's thread. The usual bridge calls
``loop.call_soon_threadsafe`` once per request: a lock, a write to the loop's self-pipe and a wake-up
each. Here every loop has one :class:`Waker`; a finished request is queued on it, and only the first
request queued while no wake-up is pending calls ``call_soon_threadsafe``: requests that finish together
wake the loop once, and :meth:`Waker.drain` finishes all of them on the loop.

* :class:`Waker` (one per loop, :func:`waker_for`): :meth:`~Waker.post` from any thread,
  :meth:`~Waker.drain` on the loop. The compiled twin takes the queue by swapping lists; this one
  is a ``deque`` (its ``append`` and ``popleft`` are atomic: no queued request can be missed).
* :class:`Awaiter`: one per request future, registered once as its callback and errback (unless the
  future wakes it itself: :func:`wakes_itself`, then kept in the future's field); holds the asyncio
  futures of the tasks awaiting the request (the current page) and posts the answer to their wakers,
  only while that answer is still the future's outcome.
* :func:`result_of`: the iterator ``__await__`` returns: the driver's ``ResultSet`` (of
  ``result_class``) or the driver's exception. A cancelled await (:func:`abandon`) drops its asyncio
  future and, when no other task awaits the request, has :func:`time_out_now` end the request on the
  driver's IO thread the way the driver's client timeout ends it.
* :class:`AwaitableCreate`: a session's ``_create_response_future`` whose futures of the driver's
  ``ResponseFuture`` class become awaitable (their class an awaitable subclass, for that object only).
"""

from __future__ import annotations

import logging
import weakref
from asyncio import CancelledError, get_running_loop
from collections import deque
from functools import partial
from typing import Any, Iterator

from cassandra.cluster import _NOT_SET

log = logging.getLogger("pyfactories.aio")

#: the attribute of a loop (or of a request future) that holds its waker (its awaiter)
WAKER_ATTRIBUTE = "_pyfactories_waker"
AWAITER_ATTRIBUTE = "_pyfactories_awaiter"
#: wakers of loops that take no attributes of their own
_wakers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class Waker:
    """Finishes asyncio futures of one loop from any thread, waking the loop once per batch."""

    __slots__ = ("_loop", "_pending", "_scheduled", "_dead", "__weakref__")

    def __init__(self, loop: Any) -> None:
        self._loop = weakref.ref(loop)  # the loop keeps its waker, never the other way round
        self._pending: deque = deque()
        self._scheduled = False
        self._dead = False

    def post(self, waiter: Any, value: Any, failed: bool) -> None:
        """Finish ``waiter`` (an asyncio future of this loop) with ``value``, an exception if
        ``failed``, on the loop; any thread. A loop gone or closed drops it (nothing can await it)."""
        if self._dead:
            return
        self._pending.append((waiter, value, failed))
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
            self._pending.clear()

    def drain(self) -> None:
        """On the loop: finish every queued future that is not done (a cancelled one stays cancelled)."""
        self._scheduled = False  # before the queue is read: a request queued from now on wakes the loop again
        pending = self._pending
        while pending:
            waiter, value, failed = pending.popleft()
            settle(waiter, value, failed)


def settle(waiter: Any, value: Any, failed: bool) -> None:
    """``waiter.set_result(value)`` or ``set_exception(value)``, unless it is done; what the future
    refuses (an exception that is not one) becomes the exception it is finished with."""
    if waiter.done():
        return
    try:
        if failed:
            waiter.set_exception(value)
        else:
            waiter.set_result(value)
    except Exception as exc:  # noqa: BLE001 - the task must end, with what went wrong
        if not waiter.done():
            waiter.set_exception(exc)


def waker_for(loop: Any) -> Waker:
    """The loop's one :class:`Waker` (kept as an attribute of the loop, or beside it for a loop that takes
    none), made on first use."""
    waker = getattr(loop, WAKER_ATTRIBUTE, None)
    if type(waker) is Waker:
        return waker
    waker = _wakers.get(loop)
    if waker is None:
        waker = Waker(loop)
        try:
            setattr(loop, WAKER_ATTRIBUTE, waker)
        except (AttributeError, TypeError):
            _wakers[loop] = waker
    return waker


class Awaiter:
    """A request future's callback and errback: posts its answer to the tasks awaiting it.

    ``waiters``: ``(waker, asyncio future)`` pairs, or None; changed only in the future's lock.

    The driver calls a future's callbacks after it has let the future's lock go. By then the task may
    have been woken by an earlier call (or found the answer itself), read the page and asked for the next
    one: a late call with the page before would give the next page's awaiters the wrong rows. So the
    waiters are taken only in the future's lock, and only while ``value`` is still the future's outcome:
    the call of a page that is no longer current wakes no one (its successor's own call does)."""

    __slots__ = ("waiters",)

    def __init__(self) -> None:
        self.waiters: tuple | None = None

    def on_result(self, rows: Any, source: Any) -> None:
        self.wake(future_of(source), rows, False)

    def on_error(self, exc: Any, source: Any) -> None:
        self.wake(future_of(source), exc, True)

    def wake(self, future: Any, value: Any, failed: bool) -> None:
        """``future`` has finished with ``value`` (its exception if ``failed``): its awaiting tasks get
        it, if it is still the future's outcome."""
        if self.waiters is None or future is None:  # no task awaits it (one that comes finds the outcome)
            return
        if (value is None) if failed else (value is _NOT_SET):  # no outcome: the driver's ``add_callback``
            return  # reads it after its lock, and a next page may have been asked for in between
        with future._callback_lock:
            current = future._final_exception if failed else future._final_result
            if current is not value:
                return
            waiters, self.waiters = self.waiters, None  # the next page's awaits add their own
        if waiters is None:
            return
        for waker, waiter in waiters:
            waker.post(waiter, value, failed)


def future_of(source: Any) -> Any:
    """The future a kept awaiter's callback was registered with: ``source`` is a weak reference to it
    (or the future itself, for one that takes none)."""
    return source() if type(source) is weakref.ReferenceType else source


#: future classes that wake their awaiter themselves when they finish (``pyfactories.futures``'
#: ``LeanResponseFuture``): their awaiter needs no callback
_waking_themselves: set = set()


def wakes_itself(future_class: type) -> None:
    """Futures of exactly ``future_class`` wake the awaiter kept on them (:data:`AWAITER_ATTRIBUTE`)
    when they finish, before their callbacks."""
    _waking_themselves.add(future_class)


def awaiter_of(future: Any) -> Awaiter:
    """The future's :class:`Awaiter`, made on first use. A future that wakes it itself
    (:func:`wakes_itself`) keeps it in its field (call this in the future's lock: two loops' threads
    awaiting one future must find the same one); any other keeps it in :data:`_kept`, registered once
    with its ``add_callbacks``."""
    if type(future) in _waking_themselves:
        awaiter = getattr(future, AWAITER_ATTRIBUTE, None)
        if type(awaiter) is Awaiter:
            return awaiter
        awaiter = Awaiter()
        setattr(future, AWAITER_ATTRIBUTE, awaiter)
        return awaiter
    return _kept_awaiter(future)


#: the awaiters of futures that do not wake theirs, by ``id(future)``: (a weak reference to the future,
#: its awaiter), removed when the future goes. Kept beside the future, not in its ``__dict__``: a new name
#: stored there from the loop's thread while the driver's thread stores too is what CPython 3.11 can
#: free twice (an instance's dict made from its shared-key values by two threads at once).
_kept: dict = {}


def _kept_awaiter(future: Any) -> Awaiter:
    key = id(future)
    entry = _kept.get(key)
    if entry is not None and entry[0]() is future:
        return entry[1]
    awaiter = Awaiter()
    try:
        ref = source = weakref.ref(future, partial(_forget, key))
    except TypeError:  # a future that takes no weak reference: an awaiter for this await only
        source = future
    else:
        entry = _kept.setdefault(key, (ref, awaiter))  # one winner when two loops' threads ask at once
        if entry[1] is not awaiter:
            if entry[0]() is future:
                return entry[1]
            _kept[key] = (ref, awaiter)  # the entry of a future gone whose callback has not run yet
    # (on a finished future, both run now: no one waits)
    future.add_callbacks(awaiter.on_result, awaiter.on_error, callback_args=(source,), errback_args=(source,))
    return awaiter


def _forget(key: int, ref: Any) -> None:
    """A future with a kept awaiter is gone: its entry goes (unless a new future has taken its id)."""
    entry = _kept.get(key)
    if entry is not None and entry[0] is ref:
        del _kept[key]


def result_of(future: Any, result_class: type) -> Iterator[Any]:
    """What awaiting the request ``future`` gives: ``result_class(future, rows)`` (the driver's
    ``ResultSet``), or its exception raised, as ``future.result()`` without blocking the loop."""
    loop = get_running_loop()
    waker = waker_for(loop)
    waking_itself = type(future) in _waking_themselves
    awaiter = None if waking_itself else awaiter_of(future)  # (registers a callback: outside the lock)
    waiter = None
    with future._callback_lock:  # the lock the driver sets the outcome in: no answer slips between
        rows, failure = future._final_result, future._final_exception
        if rows is _NOT_SET and failure is None:
            if waking_itself:
                awaiter = awaiter_of(future)
            waiter = loop.create_future()
            awaiter.waiters = (*(awaiter.waiters or ()), (waker, waiter))
    if waiter is None:
        if rows is _NOT_SET:
            raise failure
        return result_class(future, rows)
    try:
        rows = yield from waiter
    except CancelledError:
        abandon(future, awaiter, waiter)
        raise
    return result_class(future, rows)


def abandon(future: Any, awaiter: Awaiter, waiter: Any) -> None:
    """The task awaiting ``waiter`` was cancelled: it is no longer woken; if no other task awaits the
    request and it has not finished, the request ends (:func:`time_out_now`, on the driver's IO thread)."""
    with future._callback_lock:
        waiters = awaiter.waiters
        if waiters is not None:
            awaiter.waiters = tuple(pair for pair in waiters if pair[1] is not waiter) or None
        alone = awaiter.waiters is None
        running = future._final_result is _NOT_SET and future._final_exception is None
    if running and alone:
        try:
            future.session.cluster.connection_class.create_timer(0, partial(time_out_now, future))
        except Exception:  # noqa: BLE001 - a cluster shut down: the request ends with it
            log.debug("could not end the cancelled request %r", future, exc_info=True)


def sent_by(callback: Any, future: Any) -> bool:
    """Whether ``callback`` (what a connection calls with a stream's answer) is ``future``'s own."""
    return (getattr(callback, "future", None) is future
            or getattr(getattr(callback, "func", None), "__self__", None) is future)


def time_out_now(future: Any) -> None:
    """On the driver's IO thread (a timer's callback): the driver's own client timeout
    (``future._on_timeout()``: the stream kept as orphaned until its late answer, the connection given
    back, ``OperationTimedOut`` for the request's callbacks) if the request still waits for an answer on
    a stream it owns; otherwise nothing (it finished, or is between a retry's attempts)."""
    try:
        if future._final_result is not _NOT_SET or future._final_exception is not None:
            return
        connection = future._connection
        if connection is None:
            return
        entry = connection._requests.get(future._req_id)
        if entry is None or not sent_by(entry[0], future):
            return
        future._on_timeout()
    except Exception:  # noqa: BLE001 - a timer's callback: the request keeps its own timeout
        log.debug("could not end the cancelled request %r", future, exc_info=True)


class AwaitableCreate:
    """``session._create_response_future`` whose futures of exactly ``future_class``'s base (the driver's
    ``ResponseFuture``) become ``future_class`` (an awaitable subclass adding nothing else); ``previous``
    is what the session object had of its own, if anything (put back on uninstall)."""

    __slots__ = ("session", "future_class", "base", "driver", "previous")

    def __init__(self, session: Any, future_class: type) -> None:
        self.session = session
        self.future_class = future_class
        self.base = future_class.__base__
        self.previous = session.__dict__.get("_create_response_future")
        self.driver = session._create_response_future

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        future = self.driver(*args, **kwargs)
        if type(future) is self.base:
            future.__class__ = self.future_class
        return future
