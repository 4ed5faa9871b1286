"""A request's completion and its callbacks, leaner: part of the pure-Python twin (and specification)
of the compiled ``pyfactories.futures._futures`` (its ``_callbacks.pxi``, and the steps of sending and
answering a request in ``_futures.pyx``); ``_futures_py`` gives these under its own names.

* :class:`Once`: ``Event``'s ``is_set``/``set``/``clear``/``wait``. The compiled one makes a lock
  only when a thread waits on an unset future; this twin is ``threading.Event`` itself.
* :func:`set_final_result`, :func:`set_final_exception`, :func:`add_callback`,
  :func:`add_errback`, :func:`add_callbacks`: the driver's methods of the same names (without the
  leading ``_``), callbacks called with the same arguments, in the same order, outside the lock.
  Finishing one also wakes the tasks that await it (:func:`wake_awaiter`), without a callback.
  scylla-driver's releases with aborted retries (:data:`ABORTABLE`) finish a future as theirs do: not
  at all once a retry was aborted, the request's time recorded after the lock, and a retry aborted
  (``retry_abort_generation``) only for the page it was for.
* :class:`Completion`: the callback of a request sent, ``partial(future._set_result, host, connection, pool)``.
* :func:`pool_for` and :func:`not_sent`: what the driver's ``_query`` does with a host without a usable
  pool, and with a request it could not send; :func:`take_answer`: what its ``_set_result`` does with rows
  or none. The same on both driver lines (``_futures_py`` and ``_scylla_py`` send and answer with them).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from cassandra.cluster import _NOT_SET, ResponseFuture
from cassandra.connection import ConnectionBusy, ConnectionException
from cassandra.pool import NoConnectionsAvailable
from cassandra.protocol import RESULT_KIND_ROWS

Once = threading.Event
#: the driver's logger of these steps (the same records)
log = logging.getLogger("cassandra.cluster")
#: where ``pyfactories.aio`` keeps a future's awaiter
AWAITER_ATTRIBUTE = "_pyfactories_awaiter"


#: whether the driver's futures finish as scylla-driver's with aborted retries do (``_abort_retry``)
ABORTABLE = hasattr(ResponseFuture, "_abort_retry")


def set_final_result(future: Any, response: Any) -> None:
    """``ResponseFuture._set_final_result``."""
    _finish(future, response, "_final_result", "_callbacks", _NOT_SET)


if ABORTABLE:
    def set_final_exception(future: Any, response: Any, retry_abort_generation: Any = _NOT_SET) -> None:
        """``ResponseFuture._set_final_exception`` (scylla-driver's, which can abort a retry)."""
        _finish(future, response, "_final_exception", "_errbacks", retry_abort_generation)
else:
    def set_final_exception(future: Any, response: Any) -> None:  # type: ignore[misc]
        """``ResponseFuture._set_final_exception``."""
        _finish(future, response, "_final_exception", "_errbacks", _NOT_SET)


def _finish(future: Any, response: Any, outcome: str, listeners: str, generation: Any) -> None:
    aborting = generation is not _NOT_SET
    if not aborting:
        _cancel_timer(future)
    if not ABORTABLE:
        _record_time(future)
    with future._callback_lock:
        if ABORTABLE:
            if future._retry_aborted:
                return
            if aborting:
                if (generation != future._page_generation or future._final_result is not _NOT_SET
                        or future._final_exception is not None):
                    return
                future._retry_aborted = True
        setattr(future, outcome, response)
        # a copy, taken in the lock: a callback added from now on runs on the spot instead
        to_call = snapshot(getattr(future, listeners))
    if aborting:
        _cancel_timer(future)
    if ABORTABLE:
        _record_time(future)
    future._event.set()
    wake_awaiter(future, response, outcome == "_final_exception")
    for fn, args, kwargs in to_call:
        fn(response, *args, **kwargs)


def _cancel_timer(future: Any) -> None:
    timer = future._timer
    if timer:
        timer.cancel()


def _record_time(future: Any) -> None:
    metrics = future._metrics
    if metrics is not None:
        metrics.request_timer.addValue(time.time() - future._start_time)


def wake_awaiter(future: Any, response: Any, failed: bool) -> None:
    """The tasks awaiting ``future`` (``pyfactories.aio``'s awaiter, kept on the future) get its outcome:
    before the callbacks, so that a callback that raises cannot leave them waiting."""
    awaiter = getattr(future, AWAITER_ATTRIBUTE, None)
    if awaiter is not None:
        try:
            awaiter.wake(future, response, failed)
        except Exception:
            log.exception("could not wake the tasks awaiting %r", future)


def snapshot(listeners: Any) -> tuple:
    """Each listener's function and arguments as they are now, what the driver's ``partial`` per listener
    keeps (its errors too: a function that cannot be called, keyword arguments that are neither a mapping
    nor pairs), all before any runs, so a callback that changes a later one's arguments (they are
    reachable) changes nothing of this call."""
    if listeners is None:
        return ()
    found = []
    for fn, args, kwargs in listeners:
        if not callable(fn):
            raise TypeError("the first argument must be callable")
        found.append((fn, tuple(args), dict(kwargs)))  # as the driver takes them: a mapping or pairs
    return tuple(found)


def _append(future: Any, name: str, item: tuple) -> None:
    """Add to the future's callbacks or errbacks, in its lock: the list is made by the first one
    (``ResponseFuture``'s class attributes are ``None``: a future finished without any has none)."""
    listeners = getattr(future, name)
    if listeners is None:
        setattr(future, name, [item])
    else:
        listeners.append(item)


def add_callback(future: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``ResponseFuture.add_callback``."""
    with future._callback_lock:
        _append(future, "_callbacks", (fn, args, kwargs))
        run_now = future._final_result is not _NOT_SET
    if run_now:
        fn(future._final_result, *args, **kwargs)
    return future


def add_errback(future: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``ResponseFuture.add_errback``."""
    with future._callback_lock:
        _append(future, "_errbacks", (fn, args, kwargs))
        run_now = bool(future._final_exception)
    if run_now:
        fn(future._final_exception, *args, **kwargs)
    return future


def add_callbacks(future: Any, callback: Any, errback: Any, callback_args: Any = (), callback_kwargs: Any = None,
                  errback_args: Any = (), errback_kwargs: Any = None) -> None:
    """``ResponseFuture.add_callbacks`` (which returns ``None``): both added in one turn of the lock."""
    cb_args, cb_kwargs = tuple(callback_args), dict(callback_kwargs) if callback_kwargs else {}
    eb_args, eb_kwargs = tuple(errback_args), dict(errback_kwargs) if errback_kwargs else {}
    with future._callback_lock:
        _append(future, "_callbacks", (callback, cb_args, cb_kwargs))
        _append(future, "_errbacks", (errback, eb_args, eb_kwargs))
        succeeded = future._final_result is not _NOT_SET
        failed = bool(future._final_exception)
    if succeeded:
        callback(future._final_result, *cb_args, **cb_kwargs)
    if failed:
        errback(future._final_exception, *eb_args, **eb_kwargs)


class Completion:
    """The callback of a request :func:`query` sent: ``partial(future._set_result, host, connection, pool)``."""

    __slots__ = ("future", "host", "connection", "pool")

    def __init__(self, future: Any, host: Any, connection: Any, pool: Any) -> None:
        self.future, self.host, self.connection, self.pool = future, host, connection, pool

    def __call__(self, response: Any) -> None:
        self.future._set_result(self.host, self.connection, self.pool, response)


def pool_for(future: Any, host: Any) -> Any:
    """The pool of ``host`` the driver's ``_query`` sends through, or None (the error kept by host) when the
    host has none or it is shut down."""
    pool = future.session._pools.get(host)
    if not pool:
        future._errors[host] = ConnectionException("Host has been marked down or removed")
        return None
    if pool.is_shutdown:
        future._errors[host] = ConnectionException("Pool is shutdown")
        return None
    return pool


def not_sent(future: Any, host: Any, pool: Any, connection: Any, exc: BaseException) -> None:
    """The driver's ``_query`` when sending to ``host`` raised ``exc`` (called in its ``except``): the error
    kept by host and logged as the driver logs it; any other than a pool or connection at capacity counted
    and the connection given back."""
    if isinstance(exc, NoConnectionsAvailable):
        log.debug("All connections for host %s are at capacity, moving to the next host", host)
    elif isinstance(exc, ConnectionBusy):
        log.debug("Connection for host %s is busy, moving to the next host", host)
    else:
        log.debug("Error querying host %s", host, exc_info=True)
    future._errors[host] = exc
    if isinstance(exc, (NoConnectionsAvailable, ConnectionBusy)):
        return
    if future._metrics is not None:
        future._metrics.on_connection_error()
    if connection:
        pool.return_connection(connection)


def take_answer(future: Any, response: Any, kind: int) -> None:
    """The driver's ``_set_result`` of a RESULT with rows (``kind``: ``RESULT_KIND_ROWS``) or none, once the
    connection is given back: its warnings, payload, page and columns kept, the rows its factory makes
    (or ``None``) the future's result."""
    future._warnings = getattr(response, "warnings", None)
    future._custom_payload = getattr(response, "custom_payload", None)
    if kind == RESULT_KIND_ROWS:
        future._paging_state = response.paging_state
        future._col_names = response.column_names
        future._col_types = response.column_types
        future._set_final_result(future.row_factory(response.column_names, response.parsed_rows))
    else:
        future._set_final_result(None)
