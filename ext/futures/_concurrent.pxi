# Included by _futures.pyx: pyfactories.futures._concurrent_py's ListResults (its docstring is the
# specification), with its bookkeeping in C: counters and the results' places in the object, the
# session's reentrant lock taken without Python code, the caller woken through a lock of its own, and
# the driver's ExecutionResult made as the tuple its __new__ makes, without running its Python code.
# A request is sent as _sending.pxi's LeanExecute sends it; its listeners are the object's two bound
# methods, made once, added in C to a future sent in C.

from abc import get_cache_token as _abc_cache_token
from collections.abc import Mapping as _Mapping

from cassandra import cluster as _cluster
from cassandra import concurrent as _concurrent
from cassandra.cluster import ResultSet

cdef object _RLock = threading.RLock
cdef object _tuple_new = tuple.__new__
cdef object _range = range
cdef object _EXECUTION_RESULT = _concurrent.ExecutionResult
# the namedtuple's own __new__ and __init__ as imported: replaced ones run as the driver would run them
cdef tuple _EXECUTION_RESULT_STEPS = _steps(((_EXECUTION_RESULT, "__new__"), (_EXECUTION_RESULT, "__init__")))
#: pyfactories.futures._concurrent_py.QUEUED
QUEUED = not hasattr(_concurrent.ConcurrentExecutorListResults, "max_error_recursion")
cdef bint _QUEUED = QUEUED


# What ResultSet(future, rows) runs, as imported: replaced, it is called as the driver calls it.
cdef tuple _RESULT_SET_STEPS = _steps(
    ((ResultSet, "__new__"), (ResultSet, "__init__"), (ResultSet, "_set_current_rows")))
cdef object _object_new = object.__new__
cdef object _abc_token = None  # the ABC registrations under which _rows_not_mappings was last found
cdef bint _rows_not_mappings = False


cdef bint _plain_rows() except -1:
    global _abc_token, _rows_not_mappings
    token = _abc_cache_token()
    if token != _abc_token:
        _rows_not_mappings = not isinstance([], _Mapping) and not isinstance(None, _Mapping)
        _abc_token = token
    return _rows_not_mappings


cdef object _result_set(cls, future, rows):
    if (cls is not ResultSet or not (rows is None or type(rows) is list) or not _unchanged(_RESULT_SET_STEPS)
            or not _plain_rows()):
        return cls(future, rows)
    made = _object_new(ResultSet)
    made.response_future = future
    made.column_names = future._col_names
    made.column_types = future._col_types
    made._current_rows = [] if rows is None else rows
    made._page_iter = None
    made._list_mode = False
    return made


def result_set(cls, future, rows):
    """``pyfactories.futures._futures_py.result_set``."""
    return _result_set(cls, future, rows)


def result(FutureFields future not None):
    """``pyfactories.futures._futures_py.result``."""
    future._event.wait()
    final = future._final_result
    if final is not _NOT_SET:
        return _result_set(_cluster.ResultSet, future, final)
    raise future._final_exception


cdef object _execution_result(bint success, result):
    """``cassandra.concurrent.ExecutionResult(success, result)``, looked up when called, as the driver does."""
    cls = _concurrent.ExecutionResult
    if cls is _EXECUTION_RESULT and _unchanged(_EXECUTION_RESULT_STEPS):
        return _tuple_new(cls, (success, result))
    return cls(success, result)


cdef class ListResults:
    """``pyfactories.futures._concurrent_py.ListResults``."""

    cdef readonly object session
    cdef object _statements, _profile, _lock, _wake, _exception, _fail_fast, _success, _lean_success, _error
    cdef list _results, _others  # each statement's place; (idx, result) of what finished where no empty place was
    cdef Py_ssize_t _finished, _sent, _depth, _filled
    cdef bint _waiting, _sending
    cdef list _queued  # (QUEUED) the requests started while one was being sent, in order

    def __cinit__(self, session, statements_and_params, execution_profile):
        self.session = session
        self._statements = enumerate(iter(statements_and_params))
        self._profile = execution_profile
        self._lock = _RLock()
        self._wake = allocate_lock()  # held; released for the caller waiting in _wait
        self._wake.acquire()
        self._results, self._others, self._queued = [], [], []

        self._exception = None
        self._fail_fast = False

    def execute(self, concurrency, fail_fast):
        self._exception = None
        self._fail_fast = fail_fast
        self._results, self._filled, self._others = [], 0, []
        self._finished = self._sent = 0
        self._listen()
        with self._lock:
            for _ in _range(concurrency):
                if not self._execute_next():
                    break
        return self._wait()

    cdef object _execute_next(self):
        try:
            (idx, (statement, params)) = next(self._statements)
            self._sent += 1
            self._results.append(None)  # its place, filled when it finishes
            self._execute(idx, statement, params)
            return True
        except StopIteration:
            return None

    cdef _execute(self, idx, statement, params):
        if _QUEUED:
            self._send_queued(idx, statement, params)
            return
        self._depth += 1
        try:
            self._send(idx, statement, params, _NOT_SET)
        except Exception as exc:
            if self._depth < _concurrent.ConcurrentExecutorListResults.max_error_recursion:
                self._put(exc, idx, False)
            else:  # deep in a chain of requests that raise: the next one from another thread
                self.session.submit(self._put_result, exc, idx, False)
        self._depth -= 1

    cdef _listen(self):
        """The listeners, made once a call: a cycle through self until :meth:`_wait` lets them go. (A
        request still finishing after a failing-fast call returned sends the next one with them, as the
        driver's executor does.)"""
        self._success, self._lean_success, self._error = self._on_success, self._on_lean_success, self._on_error

    cdef _send(self, idx, statement, params, timeout):
        """``session.execute_async(statement, params, [timeout=timeout,] execution_profile=...)`` and its
        listeners added (in C, to a future :func:`_execute` sent in C)."""
        cdef bint untouched = False
        if self._error is None:  # sent after every request had finished (an iterator that went on after its end)
            self._listen()
        # held here: Python code sending the request (a session's own execute_async) may run this executor
        # to its end meanwhile, which lets go of them
        success, lean_success, error = self._success, self._lean_success, self._error
        session = self.session
        if _executes_as_driver(session):
            future = _execute(session, statement, params, False, None, timeout, self._profile, None, None, None,
                              &untouched)
        elif timeout is _NOT_SET:
            future = session.execute_async(statement, params, execution_profile=self._profile)
        else:
            future = session.execute_async(statement, params, timeout=timeout, execution_profile=self._profile)
        args = (future, idx)
        if untouched:
            _add_callbacks(<FutureFields>future, lean_success, error, args, {}, args, {})
        else:
            future.add_callbacks(callback=success, callback_args=args, errback=error, errback_args=args)

    cdef _send_queued(self, idx, statement, params):
        if self._sending:
            self._queued.append((idx, statement, params))
            return
        self._sending = True
        self._queued = [(idx, statement, params)]
        try:
            while self._queued:
                idx, statement, params = self._queued.pop(0)
                try:
                    self._send(idx, statement, params, None)
                except Exception as exc:
                    self._put(exc, idx, False)
        finally:
            self._sending = False

    def _on_success(self, result, future, idx):
        future.clear_callbacks()
        self._put(_result_set(_concurrent.ResultSet, future, result), idx, True)

    def _on_lean_success(self, result, future, idx):
        """``_on_success`` of a future sent in C, nothing else having seen it."""
        if (isinstance(future, FutureFields)
                and _found_on(type(future), "clear_callbacks") is <PyObject*>_DRIVERS_CLEAR_CALLBACKS):
            _clear_callbacks(<FutureFields>future)
        else:
            future.clear_callbacks()
        self._put(_result_set(_concurrent.ResultSet, future, result), idx, True)

    def _on_error(self, result, future, idx):
        self._put(result, idx, False)

    def _put_result(self, result, idx, success):
        self._put(result, idx, success)

    cdef _put(self, result, idx, bint success):
        cdef Py_ssize_t place
        outcome = _execution_result(success, result)
        with self._lock:
            results = self._results
            if type(idx) is int and 0 <= idx < len(results) and results[idx] is None:
                place = idx
                results[place] = outcome
                self._filled += 1
            else:  # finished twice, or a place that is not a statement's: kept as the driver keeps it
                self._others.append((idx, outcome))
            self._finished += 1
            if not success and self._fail_fast:
                if not self._exception:
                    self._exception = result
                self._notify()
            elif not self._execute_next() and self._finished == self._sent:
                self._notify()

    cdef _notify(self):
        if self._waiting:
            self._waiting = False
            self._wake.release()

    cdef list _wait(self):
        with self._lock:
            while self._finished < self._sent:
                # Condition.wait: the lock let go (however often this thread holds it) until woken
                self._waiting = True
                saved = self._lock._release_save()
                try:
                    self._wake.acquire()
                finally:
                    self._lock._acquire_restore(saved)
                if self._exception and self._fail_fast:
                    raise self._exception
            # every request sent has finished and no statement is left: nothing calls the listeners again, and
            # without them the results hold no cycle through self (freed when the caller lets them go, not by
            # the cyclic GC, as the driver's are)
            self._success = self._lean_success = self._error = None
        if self._exception and self._fail_fast:
            raise self._exception
        if self._others or self._filled != len(self._results):  # the driver's answer: all kept, sorted
            kept = [(idx, r) for idx, r in enumerate(self._results) if r is not None] + self._others
            return [r[1] for r in sorted(kept)]
        return self._results

