# Included by _futures.pyx: the future's completion event and its callbacks (pyfactories.futures._futures_py's
# Once, set_final_result, set_final_exception, wake_awaiter, add_callback, add_errback and add_callbacks).

@cython.auto_pickle(False)  # nothing is stored in it from Python
cdef class Once:
    """``threading.Event``'s ``is_set``, ``set``, ``clear`` and ``wait``, for one future.

    Out of the cyclic GC while it holds nothing or a lock of the C type (which holds no references: a kept
    result's future keeps its event); tracked again if a waiter makes a lock of another kind (a green-thread
    library's), or if it is an instance of a subclass."""

    cdef bint _flag
    cdef object _lock  # None, or held while the flag is unset and a waiter made it

    def __cinit__(self):
        if type(self) is Once:
            PyObject_GC_UnTrack(<void *>self)

    def is_set(self):
        return self._flag

    def set(self):
        self._set()

    cdef void _set(self) except *:
        cdef object lock
        if not self._flag:
            self._flag = True
            lock = self._lock
            if lock is not None:
                lock.release()

    def clear(self):
        if self._flag:
            self._flag = False
            self._lock = None  # set() released the old one; the next waiter makes a new one

    def wait(self, timeout=None):
        cdef object lock
        if self._flag:
            return True
        lock = self._lock
        if lock is None:
            lock = allocate_lock()
            lock.acquire()
            if type(lock) is not _C_LOCK and not PyObject_GC_IsTracked(self):
                PyObject_GC_Track(<void *>self)
            self._lock = lock
            if self._flag:
                return True
        if timeout is None:
            woken = lock.acquire()
        elif timeout > 0:
            woken = lock.acquire(True, timeout)
        else:
            woken = lock.acquire(False)
        if woken:
            lock.release()  # the next waiter's turn
            return True
        return self._flag


cdef inline tuple _snapshot(object listeners):
    """``_futures_py.snapshot``: each listener's function and arguments as they are now (the driver's
    ``partial`` per listener), taken in the future's lock."""
    if listeners is None:
        return ()
    cdef list found = []
    for fn, args, kwargs in listeners:
        if not callable(fn):
            raise TypeError("the first argument must be callable")
        if type(args) is not tuple:
            args = tuple(args)
        # a copy (None for none): an earlier callback cannot change a later one's
        kwargs = dict(kwargs) if type(kwargs) is not dict or kwargs else None
        found.append((fn, args, kwargs))
    return tuple(found)


from pyfactories.futures._callbacks_py import ABORTABLE as _ABORTABLE_LINE

#: whether the driver's futures finish as scylla-driver's with aborted retries do (``_callbacks_py.ABORTABLE``)
cdef bint _ABORTABLE = _ABORTABLE_LINE


cdef inline tuple _outcome(FutureFields future, response, bint result):
    if result:
        future._final_result = response
        return _snapshot(future._callbacks)
    future._final_exception = response
    return _snapshot(future._errbacks)


cdef inline bint _aborted(FutureFields future, bint aborting, generation) except -1:
    """In the future's lock (scylla-driver's with aborted retries): whether it is not to be finished now."""
    if future._retry_aborted:
        return True
    if aborting:
        if (generation != future._page_generation or future._final_result is not _NOT_SET
                or future._final_exception is not None):
            return True
        future._retry_aborted = True
    return False


cdef inline void _record_time(FutureFields future) except *:
    metrics = future._metrics
    if metrics is not None:
        metrics.request_timer.addValue(_now() - future._start_time)


cdef inline void _finish(FutureFields future, response, bint result, generation=_NOT_SET) except *:
    cdef tuple to_call = None, item
    cdef dict kwargs
    cdef bint aborting = generation is not _NOT_SET
    if not aborting:
        timer = future._timer
        if timer:
            timer.cancel()
    if not _ABORTABLE:
        _record_time(future)
    lock = future._callback_lock
    if type(lock) is _LockType:  # what ``with`` does, without its two bound methods
        lock.acquire()
        try:
            if not (_ABORTABLE and _aborted(future, aborting, generation)):
                to_call = _outcome(future, response, result)
        finally:
            lock.release()
    else:
        with lock:
            if not (_ABORTABLE and _aborted(future, aborting, generation)):
                to_call = _outcome(future, response, result)
    if to_call is None:
        return
    if aborting:
        timer = future._timer
        if timer:
            timer.cancel()
    if _ABORTABLE:
        _record_time(future)
    event = future._event
    if type(event) is Once:  # (not a subclass: its own set is what runs)
        (<Once>event)._set()
    else:
        event.set()
    _wake(future._pyfactories_awaiter, future, response, not result)
    for item in to_call:
        kwargs = <dict>item[2]
        if kwargs is None:
            item[0](response, *<tuple>item[1])
        else:
            item[0](response, *<tuple>item[1], **kwargs)


cdef inline void _wake(awaiter, future, response, bint failed) except *:
    if awaiter is None:  # no task awaits it
        return
    try:
        awaiter.wake(future, response, failed)
    except Exception:  # the callbacks still run
        log.exception("could not wake the tasks awaiting %r", future)


def wake_awaiter(future, response, failed):
    """``pyfactories.futures._futures_py.wake_awaiter``."""
    _wake(getattr(future, AWAITER_ATTRIBUTE, None), future, response, bool(failed))


def set_final_result(FutureFields future not None, response):
    """``ResponseFuture._set_final_result``."""
    _finish(future, response, True)


def aborting_set_final_exception(FutureFields future not None, response, retry_abort_generation=_NOT_SET):
    """``ResponseFuture._set_final_exception`` of scylla-driver's futures that can abort a retry."""
    _finish(future, response, False, retry_abort_generation)


def plain_set_final_exception(FutureFields future not None, response):
    """``ResponseFuture._set_final_exception``."""
    _finish(future, response, False)


#: the driver's (``_callbacks_py.set_final_exception``)
set_final_exception = aborting_set_final_exception if _ABORTABLE else plain_set_final_exception


cdef inline object _with(listeners, tuple item):
    """The future's callbacks or errbacks with ``item`` appended: the list is made by the first one
    added (in the future's lock)."""
    if listeners is None:
        return [item]
    listeners.append(item)
    return listeners


def add_callback(FutureFields future not None, fn, *args, **kwargs):
    """``ResponseFuture.add_callback``."""
    cdef bint run_now = False
    with future._callback_lock:
        future._callbacks = _with(future._callbacks, (fn, args, kwargs))
        run_now = future._final_result is not _NOT_SET
    if run_now:
        fn(future._final_result, *args, **kwargs)
    return future


def add_errback(FutureFields future not None, fn, *args, **kwargs):
    """``ResponseFuture.add_errback``."""
    cdef bint run_now = False
    with future._callback_lock:
        future._errbacks = _with(future._errbacks, (fn, args, kwargs))
        run_now = bool(future._final_exception)
    if run_now:
        fn(future._final_exception, *args, **kwargs)
    return future


cdef inline int _add_both(FutureFields future, tuple callback, tuple errback) except -1:
    """Both listeners appended; 1 if the future has its result, 2 if its exception."""
    future._callbacks = _with(future._callbacks, callback)
    future._errbacks = _with(future._errbacks, errback)
    return (future._final_result is not _NOT_SET) | (bool(future._final_exception) << 1)


def add_callbacks(FutureFields future not None, callback, errback, callback_args=(), callback_kwargs=None,
                  errback_args=(), errback_kwargs=None):
    """``ResponseFuture.add_callbacks`` (which returns ``None``): both added in one turn of the lock."""
    _add_callbacks(future, callback, errback, tuple(callback_args), dict(callback_kwargs) if callback_kwargs else {},
                   tuple(errback_args), dict(errback_kwargs) if errback_kwargs else {})


cdef _add_callbacks(FutureFields future, callback, errback, tuple cb_args, dict cb_kwargs, tuple eb_args,
                    dict eb_kwargs):
    cdef bint succeeded = False, failed = False
    cdef int outcome = 0
    lock = future._callback_lock
    if type(lock) is _LockType:  # what ``with`` does, without its two bound methods
        lock.acquire()
        try:
            outcome = _add_both(future, (callback, cb_args, cb_kwargs), (errback, eb_args, eb_kwargs))
        finally:
            lock.release()
    else:
        with lock:
            outcome = _add_both(future, (callback, cb_args, cb_kwargs), (errback, eb_args, eb_kwargs))
    succeeded, failed = outcome & 1, outcome & 2
    if succeeded:
        callback(future._final_result, *cb_args, **cb_kwargs)
    if failed:
        errback(future._final_exception, *eb_args, **eb_kwargs)
