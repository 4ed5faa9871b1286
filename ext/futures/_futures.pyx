# cython: language_level=3
"""Requests started with fewer Python objects: compiled twin of ``pyfactories.futures._futures_py`` (its
docstring is the specification; ``pyfactories.futures`` puts them on a session).

:class:`Once` is the one part that differs from the twin: it keeps the future's completion flag in
C and makes a lock only for a thread that waits on an unset future. The GIL orders ``set`` and
``wait``: ``set`` releases the lock if a waiter made one; a waiter that made it looks at the flag
again before blocking; each woken waiter releases the lock for the next one.
"""

cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem, PyDict_Next, PyDict_Size
from libc.stdint cimport INT64_MIN, int64_t, uint64_t
from cpython.time cimport time as _now

from as_imported cimport (bound_as as _bound_as, drivers_own as _drivers_own, found_on as _found_on,
                          is_bound as _is_bound, is_instance as _is_instance, steps as _steps,
                          unchanged as _unchanged)
from connection_fields cimport (
    get_highest_request_id, get_in_flight, get_is_closed, get_is_defunct, get_lock, get_max_request_id,
    get_orphaned_threshold_reached, get_request_ids, set_highest_request_id, set_in_flight,
)
from cpython.object cimport PyObject, PyTypeObject

cdef extern from "Python.h":
    object PyObject_GenericGetAttr(object o, object name)
    bint PyObject_IS_GC(object o)
    bint PyObject_GC_IsTracked(object o)
    void PyObject_GC_Track(void *op)
    void PyObject_GC_UnTrack(void *op)

import logging
import threading
from importlib import import_module as _import_module

from _thread import allocate_lock

from cassandra import ConsistencyLevel, ProtocolVersion
from cassandra.cluster import (
    _NOT_SET, EXEC_PROFILE_DEFAULT, ExecutionProfile, NoHostAvailable, NoSpeculativeExecutionPlan, ResponseFuture,
    Session, _ConfigMode,
)
from cassandra import metadata as _metadata
from cassandra.connection import Connection as _Connection, ConnectionBusy, ConnectionException
from collections import deque
from cassandra.metadata import MAX_LONG, MIN_LONG, HashToken, Metadata, Murmur3Token, TokenMap
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


#: CPython's own lock type (``_thread.lock``), which holds no reference but its type; None if the lock
#: ``_thread`` made at import is another (a green-thread library's, patched in before)
cdef object _C_LOCK = (_LockType if (_LockType.__module__, _LockType.__qualname__) == ("_thread", "lock")
                       and PyObject_IS_GC(allocate_lock()) else None)


cdef object _untracked_lock():
    """``threading.Lock()``, left out of the cyclic GC when it is CPython's own lock: no cycle can run through
    it, and every finished future a caller keeps holds one."""
    lock = _Lock()
    if type(lock) is _C_LOCK:
        PyObject_GC_UnTrack(<void *>lock)
    return lock


include "_fields.pxi"
include "_callbacks.pxi"


cdef void _not_sent(FutureFields future, host, pool, connection, exc) except *:
    """``pyfactories.futures._callbacks_py.not_sent``."""
    cdef bint busy = isinstance(exc, NoConnectionsAvailable)
    if busy:
        log.debug("All connections for host %s are at capacity, moving to the next host", host)
    elif isinstance(exc, ConnectionBusy):
        busy = True
        log.debug("Connection for host %s is busy, moving to the next host", host)
    else:
        log.debug("Error querying host %s", host, exc_info=True)
    future._errors[host] = exc
    if busy:
        return
    if future._metrics is not None:
        future._metrics.on_connection_error()
    if connection:
        pool.return_connection(connection)


cdef Py_ssize_t _FEW_POOLS = 16


cdef object _pool_of(pools, host):
    """``pools.get(host)``. On cassandra-driver a plain dict of a few pools is first searched for ``host``
    itself, which finds what the dict's own lookup finds without hashing the host (``Host.__hash__`` and
    its end point's are Python code, and a request's host is the very object its pool is kept under): a
    dict whose key is ``host`` has no other key equal to it, as long as the host's hash has not changed
    since it became a key. cassandra-driver never changes it; scylla-driver gives a host a new end point
    when its address changes, and may keep its pool under the old hash, so there the dict is asked.
    The search runs no Python."""
    cdef Py_ssize_t pos = 0
    cdef PyObject* key
    cdef PyObject* value
    if not _SCYLLA and type(pools) is dict and PyDict_Size(pools) <= _FEW_POOLS:
        while PyDict_Next(pools, &pos, &key, &value):
            if key is <PyObject*>host:
                return <object>value
    return pools.get(host)


cdef object _pool_for(FutureFields future, host):
    """``pyfactories.futures._callbacks_py.pool_for``."""
    pool = _pool_of(future.session._pools, host)
    if not pool:
        future._errors[host] = ConnectionException("Host has been marked down or removed")
        return None
    if pool.is_shutdown:
        future._errors[host] = ConnectionException("Pool is shutdown")
        return None
    return pool


cdef void _take_answer(FutureFields future, response, kind) except *:
    """``pyfactories.futures._callbacks_py.take_answer``."""
    future._warnings = getattr(response, "warnings", None)
    future._custom_payload = getattr(response, "custom_payload", None)
    if kind == RESULT_KIND_ROWS:
        future._paging_state = response.paging_state
        future._col_names = response.column_names
        future._col_types = response.column_types
        future._set_final_result(future.row_factory(response.column_names, response.parsed_rows))
    else:
        future._set_final_result(None)


def cassandra_query(FutureFields future not None, host, message=None, cb=None):
    """``pyfactories.futures._futures_py.query`` (cassandra-driver's)."""
    return _cassandra_query(future, host, message, cb)


cdef object _cassandra_query(FutureFields future, host, message, cb):
    if message is None:
        message = future.message
    pool = _pool_for(future, host)
    if pool is None:
        return None
    future._current_host = host
    connection = None
    try:
        connection, request_id = _borrow(pool)
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
    except Exception as exc:
        _not_sent(future, host, pool, connection, exc)
    return None


cdef class Completion:
    """``pyfactories.futures._futures_py.Completion``."""

    cdef readonly object future, host, connection, pool

    def __cinit__(self, future, host, connection, pool):
        self.future, self.host, self.connection, self.pool = future, host, connection, pool

    def __call__(self, response):
        self.future._set_result(self.host, self.connection, self.pool, response)


def is_instance(obj, cls):
    """``pyfactories.futures._futures_py.is_instance``."""
    return _is_instance(obj, cls)


def recorded_steps(tuple names not None):
    """``pyfactories.futures._futures_py.recorded_steps`` (names are strings, as attribute names are)."""
    for pair in names:
        if type(pair) is not tuple or len(<tuple>pair) != 2 or type((<tuple>pair)[1]) is not str:
            raise TypeError(f"a step to record is (class, name), the name a str, not {pair!r}")
    return _steps(names)


def finds_as_recorded(tuple recorded not None):
    """``pyfactories.futures._futures_py.finds_as_recorded`` (of a record :func:`recorded_steps` made: a tuple
    of another shape is refused, one whose first item is not its tags is looked up in full)."""
    if not recorded or type(recorded[0]) is tuple:
        raise ValueError("a record of steps begins with its tags")
    for step in recorded[1:]:
        if type(step) is not tuple or not 2 <= len(<tuple>step) <= 3:
            raise TypeError(f"a recorded step is (class, name) or (class, name, what it found), not {step!r}")
    return _unchanged(recorded)


def cassandra_set_result(FutureFields future not None, host, connection, pool, response):
    """``pyfactories.futures._futures_py.set_result`` (cassandra-driver's)."""
    if not _is_instance(response, ResultMessage):
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
        _take_answer(future, response, kind)
    except Exception as exc:
        log.exception("Unexpected exception while handling result in ResponseFuture:")
        future._set_final_exception(exc)


include "_scylla.pxi"

#: the line's steps (``_futures_py``'s names)
query = scylla_query if _SCYLLA else cassandra_query
set_result = scylla_set_result if _SCYLLA else cassandra_set_result


include "_random.pxi"
include "_pools.pxi"
include "_plans.pxi"


cdef _init_future(FutureFields future, session, message, query, timeout, prepared_statement, retry_policy,
                  row_factory, load_balancer, start_time, speculative_execution_plan, host, result_metadata, routing_token):
    future.session = session
    future.row_factory = row_factory or session.row_factory
    future._load_balancer = load_balancer or session.cluster._default_load_balancing_policy
    future.message = message
    future.query = query
    future.timeout = timeout
    future._retry_policy = retry_policy
    future._metrics = session._metrics
    future.prepared_statement = prepared_statement
    future._callback_lock = _untracked_lock()
    future._start_time = start_time
    future._host = host
    if _SCYLLA:
        _init_extras(future, result_metadata, routing_token)
    if speculative_execution_plan:
        future._spec_execution_plan = speculative_execution_plan
    if _SCYLLA:
        future.query_plan = _scylla_plan(future._load_balancer, session.keyspace, query, host)
    else:
        future.query_plan = [host] if host else _query_plan(future._load_balancer, session.keyspace, query)
    future._event = Once()
    future._errors = {}
    if _TABLET_VERSIONS:
        future._control_connection_requests = {}
    future.attempted_hosts = []
    if type(future._spec_execution_plan) is NoSpeculativeExecutionPlan:
        if timeout is not None:
            future._timer = session.cluster.connection_class.create_timer(
                start_time + timeout - _now(), future._on_timeout)
    else:
        future._start_timer()
    future._continuous_paging_state = None


def init_future(FutureFields future not None, session, message, query, timeout, prepared_statement, retry_policy,
                row_factory, load_balancer, start_time, speculative_execution_plan, host, result_metadata=_NOT_SET,
                routing_token=None):
    """``pyfactories.futures._futures_py.init_future``."""
    _init_future(future, session, message, query, timeout, prepared_statement, retry_policy, row_factory,
                 load_balancer, start_time, speculative_execution_plan, host, result_metadata, routing_token)


include "_messages.pxi"


cdef object _create(type future_class, driver, session, query, parameters, trace, custom_payload, timeout,
                    execution_profile, paging_state, host):
    cdef bint simple
    cdef int protocol_version
    cdef FutureFields future
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
    if fetch_size is FETCH_SIZE_UNSET and (_SCYLLA or protocol_version >= 2):
        fetch_size = session.default_fetch_size
    elif protocol_version == 1 and not _SCYLLA:
        fetch_size = None
    start_time = _now()
    stamp = (_timestamp(cluster.timestamp_generator) if (_SCYLLA or protocol_version >= 3) and session.use_client_timestamp
             else None)
    result_metadata, routing_key, routing_token = _NOT_SET, None, None
    if _TABLET_VERSIONS:
        routing_key, routing_token = _routing(session, query)

    if simple:
        query_string = query.query_string
        keyspace = query.keyspace if _uses_keyspace_flag(protocol_version) else None
        if parameters:
            query_string = bind_params(query_string, parameters, session.encoder)
        message = _query_message(query_string, cl, serial_cl, fetch_size, paging_state, stamp, keyspace)
    elif _SCYLLA:
        message, result_metadata = _scylla_execute_message(session, query, prepared_statement, cl, serial_cl,
                                                           fetch_size, paging_state, stamp, routing_key, routing_token)
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
    future = <FutureFields?>future_class.__new__(future_class)
    _init_future(future, session, message, query, timeout, prepared_statement, retry_policy, profile.row_factory,
                 profile.load_balancing_policy, start_time, plan, host, result_metadata, routing_token)
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
    cdef readonly tuple sends  # what a future it makes is checked for before it is sent in C (_sending.pxi)

    def __init__(self, session, type future_class):
        if not issubclass(future_class, FutureFields):
            raise TypeError(f"{future_class.__name__} is not a subclass of FutureFields")
        self.session = session
        self.future_class = future_class
        self.sends = _sends_of(future_class)
        self.previous = session.__dict__.get("_create_response_future")
        self.driver = session._create_response_future

    def __call__(self, query, parameters, trace, custom_payload, timeout, execution_profile=EXEC_PROFILE_DEFAULT,
                 paging_state=None, host=None):
        return _create(self.future_class, self.driver, self.session, query, parameters, trace, custom_payload,
                       timeout, execution_profile, paging_state, host)
include "_sending.pxi"
include "_concurrent.pxi"
