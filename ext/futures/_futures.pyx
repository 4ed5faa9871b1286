# cython: language_level=3
"""Requests started with fewer Python objects: compiled twin of ``pyfactories.futures._futures_py`` (its
docstring is the specification; ``pyfactories.futures`` puts them on a session).

:class:`Once` is the one part that differs from the twin: it keeps the future's completion flag in
C and makes a lock only for a thread that waits on an unset future. The GIL orders ``set`` and
``wait``: ``set`` releases the lock if a waiter made one; a waiter that made it looks at the flag
again before blocking; each woken waiter releases the lock for the next one.
"""

from cpython.time cimport time as _now

import logging
import threading

from _thread import allocate_lock

from cassandra import ProtocolVersion
from cassandra.cluster import (
    _NOT_SET, EXEC_PROFILE_DEFAULT, ExecutionProfile, NoSpeculativeExecutionPlan, ResponseFuture, _ConfigMode,
)
from cassandra import metadata as _metadata
from cassandra.connection import ConnectionBusy, ConnectionException
from cassandra.metadata import MAX_LONG, MIN_LONG, Metadata, Murmur3Token, TokenMap
from cassandra.pool import HostConnection, NoConnectionsAvailable
from cassandra.protocol import RESULT_KIND_ROWS, RESULT_KIND_VOID, ResultMessage
from cassandra.protocol import ExecuteMessage, QueryMessage
from cassandra.policies import DCAwareRoundRobinPolicy, HostDistance, TokenAwarePolicy
from cassandra.query import FETCH_SIZE_UNSET, BoundStatement, PreparedStatement, SimpleStatement, bind_params
from cassandra.timestamps import MonotonicTimestampGenerator

from random import shuffle

cdef object _Lock = threading.Lock
cdef object _LockType = type(allocate_lock())
cdef object _RLockType = type(threading.RLock())  # the C one, threading's default
cdef object _Condition = threading.Condition
cdef object _driver_set_result = ResponseFuture._set_result
log = logging.getLogger("cassandra.cluster")
AWAITER_ATTRIBUTE = "_pyfactories_awaiter"
cdef object _LEGACY = _ConfigMode.LEGACY
cdef object _uses_keyspace_flag = ProtocolVersion.uses_keyspace_flag
cdef object _LOCAL = HostDistance.LOCAL
cdef object _REMOTE = HostDistance.REMOTE
cdef object _MIN_LONG = MIN_LONG
cdef object _MAX_LONG = MAX_LONG


cdef class Once:
    """``threading.Event``'s ``is_set``, ``set``, ``clear`` and ``wait``, for one future."""

    cdef bint _flag
    cdef object _lock  # None, or held while the flag is unset and a waiter made it

    def is_set(self):
        return self._flag

    def set(self):
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


cdef inline tuple _outcome(future, response, bint result):
    if result:
        future._final_result = response
        return _snapshot(future._callbacks)
    future._final_exception = response
    return _snapshot(future._errbacks)


cdef inline void _finish(future, response, bint result) except *:
    cdef tuple to_call, item
    cdef dict kwargs
    timer = future._timer
    if timer:
        timer.cancel()
    metrics = future._metrics
    if metrics is not None:
        metrics.request_timer.addValue(_now() - future._start_time)
    lock = future._callback_lock
    if type(lock) is _LockType:  # what ``with`` does, without its two bound methods
        lock.acquire()
        try:
            to_call = _outcome(future, response, result)
        finally:
            lock.release()
    else:
        with lock:
            to_call = _outcome(future, response, result)
    future._event.set()
    _wake_awaiter(future, response, not result)
    for item in to_call:
        kwargs = <dict>item[2]
        if kwargs is None:
            item[0](response, *<tuple>item[1])
        else:
            item[0](response, *<tuple>item[1], **kwargs)


cdef inline void _wake_awaiter(future, response, bint failed) except *:
    awaiter = getattr(future, AWAITER_ATTRIBUTE, None)
    if awaiter is None:  # no task awaits it
        return
    try:
        awaiter.wake(response, failed)
    except Exception:  # the callbacks still run
        log.exception("could not wake the tasks awaiting %r", future)


def wake_awaiter(future, response, failed):
    """``pyfactories.futures._futures_py.wake_awaiter``."""
    _wake_awaiter(future, response, bool(failed))


def set_final_result(future, response):
    """``ResponseFuture._set_final_result``."""
    _finish(future, response, True)


def set_final_exception(future, response):
    """``ResponseFuture._set_final_exception``."""
    _finish(future, response, False)


cdef inline void _append(future, str name, tuple item) except *:
    # the future's callbacks and errbacks lists are made by the first one added (in its lock)
    listeners = getattr(future, name)
    if listeners is None:
        setattr(future, name, [item])
    else:
        listeners.append(item)


def add_callback(future, fn, *args, **kwargs):
    """``ResponseFuture.add_callback``."""
    cdef bint run_now = False
    with future._callback_lock:
        _append(future, "_callbacks", (fn, args, kwargs))
        run_now = future._final_result is not _NOT_SET
    if run_now:
        fn(future._final_result, *args, **kwargs)
    return future


def add_errback(future, fn, *args, **kwargs):
    """``ResponseFuture.add_errback``."""
    cdef bint run_now = False
    with future._callback_lock:
        _append(future, "_errbacks", (fn, args, kwargs))
        run_now = bool(future._final_exception)
    if run_now:
        fn(future._final_exception, *args, **kwargs)
    return future


cdef inline int _add_both(future, tuple callback, tuple errback) except -1:
    """Both listeners appended; 1 if the future has its result, 2 if its exception."""
    _append(future, "_callbacks", callback)
    _append(future, "_errbacks", errback)
    return (future._final_result is not _NOT_SET) | (bool(future._final_exception) << 1)


def add_callbacks(future, callback, errback, callback_args=(), callback_kwargs=None, errback_args=(),
                  errback_kwargs=None):
    """``ResponseFuture.add_callbacks`` (which returns ``None``): both added in one turn of the lock."""
    cdef bint succeeded = False, failed = False
    cdef int outcome = 0
    cb_args, cb_kwargs = tuple(callback_args), dict(callback_kwargs) if callback_kwargs else {}
    eb_args, eb_kwargs = tuple(errback_args), dict(errback_kwargs) if errback_kwargs else {}
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


def query(future, host, message=None, cb=None):
    """``pyfactories.futures._futures_py.query``."""
    if message is None:
        message = future.message
    pool = future.session._pools.get(host)
    if not pool:
        future._errors[host] = ConnectionException("Host has been marked down or removed")
        return None
    elif pool.is_shutdown:
        future._errors[host] = ConnectionException("Pool is shutdown")
        return None
    future._current_host = host
    connection = None
    try:
        connection, request_id = pool.borrow_connection(2.0)
        future._connection = connection
        prepared = future.prepared_statement
        result_meta = prepared.result_metadata if prepared else []
        if cb is None:
            cb = Completion(future, host, connection, pool)
        handler = future._protocol_handler
        future.request_encoded_size = connection.send_msg(message, request_id, cb, handler.encode_message,
                                                          handler.decode_message, result_meta)
        future.attempted_hosts.append(host)
        return request_id
    except NoConnectionsAvailable as exc:
        log.debug("All connections for host %s are at capacity, moving to the next host", host)
        future._errors[host] = exc
    except ConnectionBusy as exc:
        log.debug("Connection for host %s is busy, moving to the next host", host)
        future._errors[host] = exc
    except Exception as exc:
        log.debug("Error querying host %s", host, exc_info=True)
        future._errors[host] = exc
        if future._metrics is not None:
            future._metrics.on_connection_error()
        if connection:
            pool.return_connection(connection)
    return None


cdef class Completion:
    """``pyfactories.futures._futures_py.Completion``."""

    cdef readonly object future, host, connection, pool

    def __cinit__(self, future, host, connection, pool):
        self.future, self.host, self.connection, self.pool = future, host, connection, pool

    def __call__(self, response):
        self.future._set_result(self.host, self.connection, self.pool, response)


def set_result(future, host, connection, pool, response):
    """``pyfactories.futures._futures_py.set_result``."""
    if not isinstance(response, ResultMessage):
        _driver_set_result(future, host, connection, pool, response)
        return
    kind = response.kind
    if (type(kind) is not int or (kind != RESULT_KIND_ROWS and kind != RESULT_KIND_VOID)
            or getattr(response, "trace_id", None)
            or getattr(future.message, "continuous_paging_options", None)):
        _driver_set_result(future, host, connection, pool, response)
        return
    try:
        future.coordinator_host = host
        if pool:
            _return_connection(pool, connection)
        future._warnings = getattr(response, "warnings", None)
        future._custom_payload = getattr(response, "custom_payload", None)
        if kind == RESULT_KIND_ROWS:
            future._paging_state = response.paging_state
            future._col_names = response.column_names
            future._col_types = response.column_types
            future._set_final_result(future.row_factory(response.column_names, response.parsed_rows))
        else:
            future._set_final_result(None)
    except Exception as exc:
        log.exception("Unexpected exception while handling result in ResponseFuture:\n%s", future)
        future._set_final_exception(exc)


cdef _return_connection(pool, connection):
    condition = pool._stream_available_condition if type(pool) is HostConnection else None
    if type(condition) is not _Condition:
        pool.return_connection(connection)
        return
    lock = connection.lock
    if type(lock) is _LockType:  # what ``with`` does, without its two bound methods
        lock.acquire()
        try:
            connection.in_flight -= 1
        finally:
            lock.release()
    else:
        with lock:
            connection.in_flight -= 1
    lock = condition._lock  # what ``with condition`` takes
    if type(lock) is _RLockType or type(lock) is _LockType:
        lock.acquire()
        try:
            if condition._waiters:
                condition.notify()
        finally:
            lock.release()
    else:
        with lock:
            if condition._waiters:
                condition.notify()
    if connection.is_defunct or connection.is_closed or connection in pool._trash:
        pool.return_connection(connection, stream_was_orphaned=True)  # the rest of the driver's method


def return_connection(pool, connection):
    """``pyfactories.futures._futures_py.return_connection``."""
    _return_connection(pool, connection)


include "_plans.pxi"


cdef _init_future(future, session, message, query, timeout, prepared_statement, retry_policy, row_factory,
                  load_balancer, start_time, speculative_execution_plan, host):
    future.session = session
    future.row_factory = row_factory or session.row_factory
    future._load_balancer = load_balancer or session.cluster._default_load_balancing_policy
    future.message = message
    future.query = query
    future.timeout = timeout
    future._retry_policy = retry_policy
    future._metrics = session._metrics
    future.prepared_statement = prepared_statement
    future._callback_lock = _Lock()
    future._start_time = start_time
    future._host = host
    if speculative_execution_plan:
        future._spec_execution_plan = speculative_execution_plan
    future.query_plan = [host] if host else _query_plan(future._load_balancer, session.keyspace, query)
    future._event = Once()
    future._errors = {}
    future.attempted_hosts = []
    if type(future._spec_execution_plan) is NoSpeculativeExecutionPlan:
        if timeout is not None:
            future._timer = session.cluster.connection_class.create_timer(
                start_time + timeout - _now(), future._on_timeout)
    else:
        future._start_timer()
    future._continuous_paging_state = None


def init_future(future, session, message, query, timeout, prepared_statement, retry_policy, row_factory,
                load_balancer, start_time, speculative_execution_plan, host):
    """``pyfactories.futures._futures_py.init_future``."""
    _init_future(future, session, message, query, timeout, prepared_statement, retry_policy, row_factory,
                 load_balancer, start_time, speculative_execution_plan, host)


# The driver's messages, built as their __init__ builds them (the same attributes set in the same order)
# without the class call, keyword arguments and super() calls; by the class itself if its __init__ is
# not the one this follows.
cdef object _new_object = object.__new__
cdef object _EXECUTE_INIT = ExecuteMessage.__init__
cdef object _QUERY_INIT = QueryMessage.__init__


cdef object _query_params(msg, query_params, consistency_level, serial_consistency_level, fetch_size, paging_state,
                          timestamp, skip_meta, keyspace):
    msg.query_params = query_params
    msg.consistency_level = consistency_level
    msg.serial_consistency_level = serial_consistency_level
    msg.fetch_size = fetch_size
    msg.paging_state = paging_state
    msg.timestamp = timestamp
    msg.skip_meta = skip_meta
    msg.continuous_paging_options = None
    msg.keyspace = keyspace
    return msg


cdef object _execute_message(query_id, query_params, consistency_level, serial_consistency_level, fetch_size,
                             paging_state, timestamp, skip_meta, result_metadata_id):
    if ExecuteMessage.__init__ is not _EXECUTE_INIT:
        return ExecuteMessage(query_id, query_params, consistency_level, serial_consistency_level, fetch_size,
                              paging_state, timestamp, skip_meta=skip_meta, continuous_paging_options=None,
                              result_metadata_id=result_metadata_id)
    msg = _new_object(ExecuteMessage)
    msg.query_id = query_id
    msg.result_metadata_id = result_metadata_id
    return _query_params(msg, query_params, consistency_level, serial_consistency_level, fetch_size, paging_state,
                         timestamp, skip_meta, None)


cdef object _query_message(query, consistency_level, serial_consistency_level, fetch_size, paging_state, timestamp,
                           keyspace):
    if QueryMessage.__init__ is not _QUERY_INIT:
        return QueryMessage(query, consistency_level, serial_consistency_level, fetch_size, paging_state, timestamp,
                            None, keyspace)
    msg = _new_object(QueryMessage)
    msg.query = query
    return _query_params(msg, None, consistency_level, serial_consistency_level, fetch_size, paging_state, timestamp,
                         False, keyspace)


def execute_message(query_id, query_params, consistency_level, serial_consistency_level, fetch_size, paging_state,
                    timestamp, skip_meta, result_metadata_id):
    """``pyfactories.futures._futures_py.execute_message``."""
    return _execute_message(query_id, query_params, consistency_level, serial_consistency_level, fetch_size,
                            paging_state, timestamp, skip_meta, result_metadata_id)


def query_message(query, consistency_level, serial_consistency_level, fetch_size, paging_state, timestamp, keyspace):
    """``pyfactories.futures._futures_py.query_message``."""
    return _query_message(query, consistency_level, serial_consistency_level, fetch_size, paging_state, timestamp,
                          keyspace)


cdef object _create(type future_class, driver, session, query, parameters, trace, custom_payload, timeout,
                    execution_profile, paging_state, host):
    cdef bint simple
    cdef int protocol_version
    cdef double start_time
    cluster = session.cluster
    version = session._protocol_version  # read in C as an int: anything else is the driver's to compare
    if (custom_payload or cluster._config_mode == _LEGACY or type(version) is not int
            or not 0 <= <object>version <= 0xFF):
        return driver(query, parameters, trace, custom_payload, timeout, execution_profile, paging_state, host)
    if isinstance(query, str):
        query = SimpleStatement(query)
    elif isinstance(query, PreparedStatement):
        query = query.bind(parameters)
    profile = (execution_profile if isinstance(execution_profile, ExecutionProfile)
               else session.get_execution_profile(execution_profile))
    simple = isinstance(query, SimpleStatement)
    if not (simple or isinstance(query, BoundStatement)) or profile.continuous_paging_options:
        return driver(query, parameters, trace, custom_payload, timeout, execution_profile, paging_state, host)
    prepared_statement = None if simple else query.prepared_statement

    if timeout is _NOT_SET:
        timeout = profile.request_timeout
    cl = query.consistency_level
    if cl is None:
        cl = profile.consistency_level
    serial_cl = query.serial_consistency_level
    if serial_cl is None:
        serial_cl = profile.serial_consistency_level
    retry_policy = query.retry_policy or profile.retry_policy
    protocol_version = version
    fetch_size = query.fetch_size
    if fetch_size is FETCH_SIZE_UNSET and protocol_version >= 2:
        fetch_size = session.default_fetch_size
    elif protocol_version == 1:
        fetch_size = None
    start_time = _now()
    stamp = _timestamp(cluster.timestamp_generator) if protocol_version >= 3 and session.use_client_timestamp else None

    if simple:
        query_string = query.query_string
        keyspace = query.keyspace if _uses_keyspace_flag(protocol_version) else None
        if parameters:
            query_string = bind_params(query_string, parameters, session.encoder)
        message = _query_message(query_string, cl, serial_cl, fetch_size, paging_state, stamp, keyspace)
    else:
        message = _execute_message(prepared_statement.query_id, query.values, cl, serial_cl, fetch_size, paging_state,
                                   stamp, bool(prepared_statement.result_metadata),
                                   prepared_statement.result_metadata_id)
    message.tracing = trace
    payload = query.custom_payload
    if payload:
        message.update_custom_payload(payload)
    message.allow_beta_protocol_version = cluster.allow_beta_protocol_version

    spec_policy = profile.speculative_execution_policy
    plan = spec_policy.new_plan(query.keyspace or session.keyspace, query) if query.is_idempotent and spec_policy else None
    future = future_class.__new__(future_class)
    _init_future(future, session, message, query, timeout, prepared_statement, retry_policy, profile.row_factory,
                 profile.load_balancing_policy, start_time, plan, host)
    return future


def create_future(type future_class, driver, session, query, parameters, trace, custom_payload, timeout,
                  execution_profile=EXEC_PROFILE_DEFAULT, paging_state=None, host=None):
    """``pyfactories.futures._futures_py.create_future``."""
    return _create(future_class, driver, session, query, parameters, trace, custom_payload, timeout,
                   execution_profile, paging_state, host)


cdef class LeanCreate:
    """``pyfactories.futures._futures_py.LeanCreate``."""

    cdef readonly object session, driver, previous
    cdef readonly type future_class

    def __init__(self, session, type future_class):
        self.session = session
        self.future_class = future_class
        self.previous = session.__dict__.get("_create_response_future")
        self.driver = session._create_response_future

    def __call__(self, query, parameters, trace, custom_payload, timeout, execution_profile=EXEC_PROFILE_DEFAULT,
                 paging_state=None, host=None):
        return _create(self.future_class, self.driver, self.session, query, parameters, trace, custom_payload,
                       timeout, execution_profile, paging_state, host)
