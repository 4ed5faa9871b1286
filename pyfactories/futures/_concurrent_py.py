"""The driver's ``execute_concurrent`` with its results as a list: part of the pure-Python twin (and
specification) of the compiled ``pyfactories.futures._futures`` (its ``_concurrent.pxi``), used by
:mod:`pyfactories.futures._futures_py`.

:class:`ListResults` is what ``cassandra.concurrent.ConcurrentExecutorListResults`` does (cassandra-driver
3.30), step for step: the same requests in the same order (at most ``concurrency`` in flight, the next one
sent from the callback of the last one finished), the same calls on the session and the futures, the same
``ExecutionResult`` s in the statements' order, the same error raised first when failing fast, and the
same hand-over to ``session.submit`` of a request that raises deep in a chain of such requests.

scylla-driver's executor (3.29.11 and 3.29.12) sends differently, and :data:`QUEUED` says which one the
driver has: it sends every request with no client timeout (``timeout=None``), and a request that the
callback of another starts while it is being sent (a request that failed at once) waits in a queue that
the outermost send empties in order; an ``execute_async`` that raises is recorded at once. No chain of
nested sends, so no recursion limit and no ``session.submit``.

What it saves the driver's (per request: a ``Condition`` entered through Python code, a heap entry and a
sort at the end, a namedtuple built through Python code, two bound methods) is in the compiled twin; this
one is written to be read.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Mapping
from typing import Any

from cassandra import cluster as _cluster
from cassandra import concurrent as _concurrent
from cassandra.cluster import _NOT_SET, ResultSet

from ._plans_py import _steps, _unchanged

__all__ = ["ListResults", "QUEUED", "result_set", "result"]

#: Whether the driver's executor queues the requests started while one is being sent (scylla-driver's),
#: rather than nesting them up to a recursion limit (cassandra-driver's ``max_error_recursion``).
QUEUED = not hasattr(_concurrent.ConcurrentExecutorListResults, "max_error_recursion")

# What ResultSet(future, rows) runs, as imported: replaced, it is called as the driver calls it.
_RESULT_SET_STEPS = _steps(((ResultSet, "__new__"), (ResultSet, "__init__"), (ResultSet, "_set_current_rows")))
_abc_token: Any = None  # the ABC registrations under which _rows_not_mappings was last found
_rows_not_mappings = False


def _plain_rows() -> bool:
    """Whether a ``list`` and ``None`` are not ``Mapping`` s (``ResultSet`` treats a mapping as one row),
    as of the ABC registrations now; found again after any registration."""
    global _abc_token, _rows_not_mappings
    token = abc.get_cache_token()
    if token != _abc_token:
        _rows_not_mappings = not isinstance([], Mapping) and not isinstance(None, Mapping)
        _abc_token = token
    return _rows_not_mappings


def result_set(cls: Any, future: Any, rows: Any) -> Any:
    """``cls(future, rows)``: for the driver's own ``ResultSet`` and rows that are a ``list`` or ``None`` (no
    rows), the object its ``__init__`` makes, attributes set in the same order, without the call."""
    if (cls is not ResultSet or not (rows is None or type(rows) is list) or not _unchanged(_RESULT_SET_STEPS)
            or not _plain_rows()):
        return cls(future, rows)
    made = object.__new__(ResultSet)
    made.response_future = future
    made.column_names = future._col_names
    made.column_types = future._col_types
    made._current_rows = [] if rows is None else rows  # (_set_current_rows: not iterable and false: none)
    made._page_iter = None
    made._list_mode = False
    return made


def result(future: Any) -> Any:
    """``ResponseFuture.result``, its ``ResultSet`` made by :func:`result_set`."""
    future._event.wait()
    if future._final_result is not _NOT_SET:
        return result_set(_cluster.ResultSet, future, future._final_result)
    raise future._final_exception


class ListResults:
    """``ConcurrentExecutorListResults(session, statements_and_params, execution_profile)``."""

    def __init__(self, session: Any, statements_and_params: Any, execution_profile: Any) -> None:
        self.session = session
        self._statements = enumerate(iter(statements_and_params))
        self._profile = execution_profile
        self._condition = threading.Condition()
        self._fail_fast = False
        self._results: list[Any] = []  # each statement's place, filled when it finishes
        self._filled = 0
        self._others: list[Any] = []  # (idx, result) of what finished where no empty place was
        self._finished = 0
        self._sent = 0
        self._depth = 0
        self._sending = False  # (QUEUED) a send runs further up this call chain: queue, do not nest
        self._queued: list[Any] = []
        self._exception: Any = None

    def execute(self, concurrency: Any, fail_fast: Any) -> list[Any]:
        self._exception = None
        self._fail_fast = fail_fast
        self._results, self._filled, self._others = [], 0, []
        self._finished = self._sent = 0
        with self._condition:
            for _ in range(concurrency):
                if not self._execute_next():
                    break
        return self._wait()

    def _execute_next(self) -> bool | None:
        try:
            (idx, (statement, params)) = next(self._statements)
            self._sent += 1
            self._results.append(None)  # its place, filled when it finishes
            self._execute(idx, statement, params)
            return True
        except StopIteration:
            return None

    def _execute(self, idx: Any, statement: Any, params: Any) -> None:
        if QUEUED:
            self._send_queued(idx, statement, params)
            return
        self._depth += 1
        try:
            future = self.session.execute_async(statement, params, execution_profile=self._profile)
            args = (future, idx)
            future.add_callbacks(callback=self._on_success, callback_args=args,
                                 errback=self._on_error, errback_args=args)
        except Exception as exc:
            if self._depth < _concurrent.ConcurrentExecutorListResults.max_error_recursion:
                self._put_result(exc, idx, False)
            else:  # deep in a chain of requests that raise: the next one from another thread
                self.session.submit(self._put_result, exc, idx, False)
        self._depth -= 1

    def _send_queued(self, idx: Any, statement: Any, params: Any) -> None:
        """scylla-driver's send (see :data:`QUEUED`): nested, the request joins the queue; outermost, the
        queue starts as this request alone and is sent from, first in first out."""
        if self._sending:
            self._queued.append((idx, statement, params))
            return
        self._sending = True
        self._queued = [(idx, statement, params)]
        try:
            while self._queued:
                idx, statement, params = self._queued.pop(0)
                try:
                    future = self.session.execute_async(statement, params, timeout=None,
                                                        execution_profile=self._profile)
                    args = (future, idx)
                    future.add_callbacks(callback=self._on_success, callback_args=args,
                                         errback=self._on_error, errback_args=args)
                except Exception as exc:
                    self._put_result(exc, idx, False)
        finally:
            self._sending = False

    def _on_success(self, result: Any, future: Any, idx: Any) -> None:
        future.clear_callbacks()
        self._put_result(result_set(_concurrent.ResultSet, future, result), idx, True)

    def _on_error(self, result: Any, future: Any, idx: Any) -> None:
        self._put_result(result, idx, False)

    def _put_result(self, result: Any, idx: Any, success: bool) -> None:
        outcome = _concurrent.ExecutionResult(success, result)
        with self._condition:
            results = self._results
            if type(idx) is int and 0 <= idx < len(results) and results[idx] is None:
                results[idx] = outcome
                self._filled += 1
            else:  # finished twice (an error raised in a callback of a request that had finished), or a
                self._others.append((idx, outcome))  # place that is not a statement's: as the driver keeps it
            self._finished += 1
            if not success and self._fail_fast:
                if not self._exception:
                    self._exception = result
                self._condition.notify()
            elif not self._execute_next() and self._finished == self._sent:
                self._condition.notify()

    def _wait(self) -> list[Any]:
        with self._condition:
            while self._finished < self._sent:
                self._condition.wait()
                if self._exception and self._fail_fast:
                    raise self._exception
        if self._exception and self._fail_fast:
            raise self._exception
        if self._others or self._filled != len(self._results):
            # the driver's answer: every result kept, sorted by place (and by result, for a place twice)
            kept = [(idx, r) for idx, r in enumerate(self._results) if r is not None] + self._others
            return [r[1] for r in sorted(kept)]
        return self._results
