"""Requests started with fewer Python objects: the pure-Python twin (and specification) of the
compiled ``pyfactories.futures._futures``.

The driver's ``Session.execute_async`` builds, per request, a ``ResponseFuture`` whose
``threading.Event`` makes a ``Condition``, its lock, its waiter queue and six bound methods,
although most requests are finished by a callback and never waited on, and two lists for
callbacks and errbacks, added or not; ``add_callbacks`` takes the future's lock twice; finishing a
request builds one ``functools.partial`` per callback. This module is what ``pyfactories.futures``
puts in their place, with the driver's semantics:

* :class:`Once`, :func:`set_final_result`, :func:`set_final_exception`, :func:`add_callback`,
  :func:`add_errback`, :func:`add_callbacks` (``_callbacks_py``): the future's completion event and its
  callbacks, the driver's semantics without a ``Condition`` or a ``functools.partial`` per request.
* :func:`query` (with :class:`Completion`), :func:`set_result` and :func:`return_connection`: the
  driver's ``_query`` and ``_set_result`` (and its pool's ``return_connection``) of a request with
  rows or none, without a ``functools.partial``, keyword arguments or a ``Condition.notify`` per
  request; any other answer goes to the driver's ``_set_result``.
* :func:`query_plan` and :func:`timestamp`: the driver's default load balancing policy's query plan
  and its timestamp generator (both pure Python in the driver), for the future and its message.
* :func:`create_future` (:class:`LeanCreate`, a session's method): what
  ``Session._create_response_future`` does for a ``str``, a ``SimpleStatement``, a
  ``PreparedStatement`` or a ``BoundStatement`` under execution profiles, without a custom payload
  (``execute_as`` is one) or continuous paging; the request gets a future of class ``future_class``
  (``pyfactories.futures.LeanResponseFuture``). Any other request goes to the driver's method.
* :class:`ListResults`: the driver's ``execute_concurrent`` (and ``execute_concurrent_with_args``) with
  the results as a list (``pyfactories.futures._concurrent_py``; cassandra-driver's only).

On scylla-driver (:data:`SCYLLA`) the steps where its futures differ are its own (``_scylla_py``): how a
request is sent, an answer taken, a future built (routing tokens, tablet versions), and its query plan
(its policy's own).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from cassandra.cluster import (
    _NOT_SET,
    EXEC_PROFILE_DEFAULT,
    ExecutionProfile,
    NoSpeculativeExecutionPlan,
    ResponseFuture,
    Session,
    _ConfigMode,
)
from cassandra.auth import _proxy_execute_key
from cassandra.protocol import RESULT_KIND_ROWS, RESULT_KIND_VOID, ResultMessage
from cassandra.protocol import ExecuteMessage, QueryMessage
from cassandra.query import (
    FETCH_SIZE_UNSET,
    BoundStatement,
    PreparedStatement,
    SimpleStatement,
    bind_params,
)

from cassandra import ProtocolVersion

from . import _callbacks_py, _concurrent_py, _plans_py, _scylla_py
from ._pools_py import borrow_connection, return_connection

# the plans' part of this twin, under the names the compiled module has
distance, get_replicas, token_aware_plan = _plans_py.distance, _plans_py.get_replicas, _plans_py.token_aware_plan
murmur3 = _plans_py.murmur3
drivers_own = _plans_py.drivers_own
query_plan, timestamp = _plans_py.query_plan, _plans_py.timestamp
ListResults, result_set, result = _concurrent_py.ListResults, _concurrent_py.result_set, _concurrent_py.result
QUEUED = _concurrent_py.QUEUED

# the callbacks' part of this twin, under the names the compiled module has
Once, Completion, AWAITER_ATTRIBUTE = _callbacks_py.Once, _callbacks_py.Completion, _callbacks_py.AWAITER_ATTRIBUTE
set_final_result, set_final_exception = _callbacks_py.set_final_result, _callbacks_py.set_final_exception
add_callback, add_errback, add_callbacks = _callbacks_py.add_callback, _callbacks_py.add_errback, _callbacks_py.add_callbacks
wake_awaiter, snapshot, not_sent = _callbacks_py.wake_awaiter, _callbacks_py.snapshot, _callbacks_py.not_sent
take_answer, pool_for = _callbacks_py.take_answer, _callbacks_py.pool_for
#: the driver's logger of these steps (the same records)
log = logging.getLogger("cassandra.cluster")
#: the plan of requests without speculative executions (the driver's class default): no timer for it
_NO_SPECULATION = NoSpeculativeExecutionPlan
#: whether the driver is scylla-driver, whose futures differ (``_scylla_py``)
SCYLLA = _scylla_py.SCYLLA


#: the attributes of the driver's ``ResponseFuture`` a lean future keeps in :class:`FutureFields`
FIELDS = ("session", "row_factory", "message", "query", "timeout", "prepared_statement", "query_plan",
          "attempted_hosts", "coordinator_host", "request_encoded_size", "_load_balancer", "_retry_policy",
          "_metrics", "_callback_lock", "_start_time", "_host", "_spec_execution_plan", "_event", "_errors",
          "_timer", "_continuous_paging_state", "_current_host", "_connection", "_req_id", "_protocol_handler",
          "_warnings", "_custom_payload", "_paging_state", "_col_names", "_col_types", "_final_result",
          "_final_exception", "_callbacks", "_errbacks", _callbacks_py.AWAITER_ATTRIBUTE)


class FutureFields:
    """The first base of a lean future (``pyfactories.futures.LeanResponseFuture``): the attributes of
    the driver's ``ResponseFuture`` that a request's steps read and write (:data:`FIELDS`: its message,
    query, plan, host, connection, lock, event, timer, outcome, callbacks, errbacks, the answer's paging
    state, column names and types, warnings and custom payload, and the awaiter of ``pyfactories.aio``)
    are slots of the object, not entries of its ``__dict__``, each starting as the driver's class
    attribute (None where it has none). The compiled twin keeps them as C fields, reached by its steps
    without an attribute lookup.

    Why not the ``__dict__``: CPython 3.11 keeps the attributes of a class's instances in one table of
    names shared by them all, up to 30 names; a future of the driver's, with what a request adds, has
    more. Past the table, an instance's attributes become a dict of its own, made on its first store of
    a name the table lacks. A request's future is written by two threads (the caller adds callbacks,
    the event loop's thread sets the answer); if the allocation of that dict runs the cyclic collector
    and another thread stores on the same future meanwhile, CPython 3.11 makes two dicts over the same
    values and frees them twice (AddressSanitizer: a double free in ``dictresize``)."""

    __slots__ = FIELDS

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        future = super().__new__(cls)
        for name, value in _FIELD_DEFAULTS:
            object.__setattr__(future, name, value)
        return future


#: each field's value before it is set: the driver's class attribute as imported, None where it has none
_FIELD_DEFAULTS = tuple((name, getattr(ResponseFuture, name, None)) for name in FIELDS)


def cassandra_query(future: Any, host: Any, message: Any = None, cb: Any = None) -> Any:
    """cassandra-driver's ``ResponseFuture._query``: the request sent to ``host``; its request id, or ``None`` (the
    error kept by host) when that host cannot take it. The answer goes to :class:`Completion`."""
    if message is None:
        message = future.message
    pool = pool_for(future, host)
    if pool is None:
        return None
    future._current_host = host
    connection = None
    try:
        connection, request_id = borrow_connection(pool)
        future._connection = connection
        result_meta = future.prepared_statement.result_metadata if future.prepared_statement else []
        if cb is None:
            cb = Completion(future, host, connection, pool)
        handler = future._protocol_handler
        future.request_encoded_size = connection.send_msg(message, request_id, cb, handler.encode_message,
                                                          handler.decode_message, result_meta)
        future.attempted_hosts.append(host)
        return request_id
    except Exception as exc:
        not_sent(future, host, pool, connection, exc)
    return None



def is_instance(obj: Any, cls: Any) -> bool:
    """``isinstance(obj, cls)``, as the compiled futures and dispatch ask it of an answer (compiled, answered
    from the classes where the metaclass checks instances as ``type`` does)."""
    return isinstance(obj, cls)


def recorded_steps(names: tuple) -> tuple:
    """What ``(cls, name)`` pairs find now, for :func:`finds_as_recorded` (the compiled record also keeps the
    classes' version tags, so that while none changed nothing is looked up again). Names are strings, as
    attribute names are."""
    for pair in names:
        if type(pair) is not tuple or len(pair) != 2 or type(pair[1]) is not str:
            raise TypeError(f"a step to record is (class, name), the name a str, not {pair!r}")
    return _plans_py._steps(names)


def finds_as_recorded(recorded: tuple) -> bool:
    """Whether each class of ``recorded`` is still a class whose name finds what it found then."""
    return _plans_py._unchanged(recorded)


def cassandra_set_result(future: Any, host: Any, connection: Any, pool: Any, response: Any) -> None:
    """cassandra-driver's ``ResponseFuture._set_result`` of a RESULT with rows or without (VOID) and no trace: any other
    answer goes to the driver's method."""
    kind = response.kind if isinstance(response, ResultMessage) else None
    if (type(kind) is not int or kind not in (RESULT_KIND_ROWS, RESULT_KIND_VOID) or getattr(response, "trace_id", None)
            or getattr(future.message, "continuous_paging_options", None)):
        ResponseFuture._set_result(future, host, connection, pool, response)
        return
    try:
        future.coordinator_host = host
        if pool:
            return_connection(pool, connection)
        take_answer(future, response, kind)
    except Exception as exc:
        log.exception("Unexpected exception while handling result in ResponseFuture:")
        future._set_final_exception(exc)


def init_future(future: Any, session: Any, message: Any, query: Any, timeout: Any, prepared_statement: Any,
                retry_policy: Any, row_factory: Any, load_balancer: Any, start_time: float,
                speculative_execution_plan: Any, host: Any, result_metadata: Any = _NOT_SET,
                routing_token: Any = None) -> None:
    """``ResponseFuture.__init__`` of a request :func:`create_future` builds (metrics: the session's; no
    continuous paging state), its event a :class:`Once`; on scylla-driver, with what its futures add
    (``_scylla_py.init_extras``)."""
    future.session = session
    future.row_factory = row_factory or session.row_factory
    future._load_balancer = load_balancer or session.cluster._default_load_balancing_policy
    future.message = message
    future.query = query
    future.timeout = timeout
    future._retry_policy = retry_policy
    future._metrics = session._metrics
    future.prepared_statement = prepared_statement
    future._callback_lock = threading.Lock()
    future._start_time = start_time
    future._host = host
    if SCYLLA:
        _scylla_py.init_extras(future, result_metadata, routing_token)
    if speculative_execution_plan:
        future._spec_execution_plan = speculative_execution_plan
    # ResponseFuture._make_query_plan
    if SCYLLA:
        future.query_plan = _scylla_py.plan(future._load_balancer, session.keyspace, query, host)
    else:
        future.query_plan = [host] if host else query_plan(future._load_balancer, session.keyspace, query)
    future._event = Once()
    future._errors = {}
    if SCYLLA and _scylla_py.TABLET_VERSIONS:
        future._control_connection_requests = {}
    future.attempted_hosts = []
    if type(future._spec_execution_plan) is _NO_SPECULATION:
        # ResponseFuture._start_timer of a plan whose next_execution is always -1
        if timeout is not None:
            future._timer = session.cluster.connection_class.create_timer(
                start_time + timeout - time.time(), future._on_timeout)
    else:
        future._start_timer()
    future._continuous_paging_state = None


def execute_message(query_id: Any, query_params: Any, consistency_level: Any, serial_consistency_level: Any,
                    fetch_size: Any, paging_state: Any, timestamp: Any, skip_meta: Any, result_metadata_id: Any) -> Any:
    """The driver's ``ExecuteMessage`` of a request (no continuous paging). The compiled twin sets the
    attributes its ``__init__`` sets, in the same order, without calling it (unless it was replaced)."""
    return ExecuteMessage(query_id, query_params, consistency_level, serial_consistency_level, fetch_size,
                          paging_state, timestamp, skip_meta=skip_meta, continuous_paging_options=None,
                          result_metadata_id=result_metadata_id)


def query_message(query: Any, consistency_level: Any, serial_consistency_level: Any, fetch_size: Any,
                  paging_state: Any, timestamp: Any, keyspace: Any) -> Any:
    """The driver's ``QueryMessage`` of a request (no continuous paging), as :func:`execute_message`."""
    return QueryMessage(query, consistency_level, serial_consistency_level, fetch_size, paging_state, timestamp,
                        None, keyspace)


def create_future(future_class: type, driver: Any, session: Any, query: Any, parameters: Any, trace: Any,
                  custom_payload: Any, timeout: Any, execution_profile: Any = EXEC_PROFILE_DEFAULT,
                  paging_state: Any = None, host: Any = None) -> Any:
    """``session._create_response_future(...)``: the request's future, not sent yet. A request this
    module does not build (see the module's docstring) is given to ``driver``, the method it replaces."""
    version = session._protocol_version  # an int of a protocol, or the driver's to compare
    if (custom_payload or session.cluster._config_mode == _ConfigMode.LEGACY or type(version) is not int
            or not 0 <= version <= 0xFF):
        return driver(query, parameters, trace, custom_payload, timeout, execution_profile, paging_state, host)
    if isinstance(query, str):
        query = SimpleStatement(query)
    elif isinstance(query, PreparedStatement):
        query = query.bind(parameters)
    profile = (execution_profile if isinstance(execution_profile, ExecutionProfile)
               else session.get_execution_profile(execution_profile))
    simple = isinstance(query, SimpleStatement)
    if not (simple or isinstance(query, BoundStatement)) or profile.continuous_paging_options:
        # a batch, a graph statement, continuous paging: the driver's method takes the bound statement as it is
        return driver(query, parameters, trace, custom_payload, timeout, execution_profile, paging_state, host)
    prepared_statement = None if simple else query.prepared_statement

    if timeout is _NOT_SET:
        timeout = profile.request_timeout
    cl = query.consistency_level if query.consistency_level is not None else profile.consistency_level
    serial_cl = (query.serial_consistency_level if query.serial_consistency_level is not None
                 else profile.serial_consistency_level)
    retry_policy = query.retry_policy or profile.retry_policy
    protocol_version = version
    fetch_size = query.fetch_size
    if fetch_size is FETCH_SIZE_UNSET and (SCYLLA or protocol_version >= 2):
        fetch_size = session.default_fetch_size
    elif protocol_version == 1 and not SCYLLA:  # scylla-driver asks no protocol version here
        fetch_size = None
    start_time = time.time()
    stamp = (timestamp(session.cluster.timestamp_generator)
             if (SCYLLA or protocol_version >= 3) and session.use_client_timestamp else None)
    result_metadata, routing_key, routing_token = _NOT_SET, None, None
    if _scylla_py.TABLET_VERSIONS:
        routing_key, routing_token = _scylla_py.routing(session, query)

    if prepared_statement is None:
        query_string = query.query_string
        keyspace = query.keyspace if ProtocolVersion.uses_keyspace_flag(protocol_version) else None
        if parameters:
            query_string = bind_params(query_string, parameters, session.encoder)
        message = query_message(query_string, cl, serial_cl, fetch_size, paging_state, stamp, keyspace)
    elif SCYLLA:
        message, result_metadata = _scylla_py.execute_message(session, query, prepared_statement, cl, serial_cl,
                                                              fetch_size, paging_state, stamp, routing_key,
                                                              routing_token)
    else:
        message = execute_message(prepared_statement.query_id, query.values, cl, serial_cl, fetch_size, paging_state,
                                  stamp, bool(prepared_statement.result_metadata),
                                  prepared_statement.result_metadata_id)
    message.tracing = trace
    if query.custom_payload:
        message.update_custom_payload(query.custom_payload)
    message.allow_beta_protocol_version = session.cluster.allow_beta_protocol_version

    spec_policy = profile.speculative_execution_policy
    plan = (spec_policy.new_plan(query.keyspace or session.keyspace, query) if query.is_idempotent and spec_policy
            else None)
    future = future_class.__new__(future_class)
    init_future(future, session, message, query, timeout, prepared_statement, retry_policy, profile.row_factory,
                profile.load_balancing_policy, start_time, plan, host, result_metadata, routing_token)
    return future


class LeanCreate:
    """``session._create_response_future`` giving ``future_class`` futures (:func:`create_future`);
    ``previous`` is what the session object had of its own, if anything (put back on uninstall)."""

    __slots__ = ("session", "future_class", "driver", "previous")

    def __init__(self, session: Any, future_class: type) -> None:
        if not issubclass(future_class, FutureFields):
            raise TypeError(f"{future_class.__name__} is not a subclass of FutureFields")
        self.session = session
        self.future_class = future_class
        self.previous = session.__dict__.get("_create_response_future")
        self.driver = session._create_response_future

    def __call__(self, query: Any, parameters: Any, trace: Any, custom_payload: Any, timeout: Any,
                 execution_profile: Any = EXEC_PROFILE_DEFAULT, paging_state: Any = None, host: Any = None) -> Any:
        return create_future(self.future_class, self.driver, self.session, query, parameters, trace, custom_payload,
                             timeout, execution_profile, paging_state, host)


#: the driver's ``Session.execute_async``, as imported (if it is the driver's own): replaced on the class,
#: :class:`LeanExecute` calls that
DRIVERS_EXECUTE_ASYNC = drivers_own(vars(Session).get("execute_async"))


class LeanExecute:
    """``session.execute_async``: the steps of the driver's ``Session.execute_async`` (:func:`execute_async`),
    while the session's class has the driver's method as imported; the class's method otherwise (replaced
    by instrumentation, say), with the caller's arguments as given. ``previous``: as :class:`LeanCreate`'s
    (``install`` leaves a session that has an ``execute_async`` of its own as it is)."""

    __slots__ = ("session", "previous")

    def __init__(self, session: Any) -> None:
        self.session = session
        self.previous = session.__dict__.get("execute_async")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        session = self.session
        method = _plans_py._type_lookup(type(session), "execute_async")
        if method is not DRIVERS_EXECUTE_ASYNC:  # what ``session.execute_async`` would be without this
            bound = method.__get__(session, type(session)) if hasattr(type(method), "__get__") else method
            return bound(*args, **kwargs)
        return execute_async(session, *args, **kwargs)


def execute_async(session: Any, query: Any, parameters: Any = None, trace: Any = False, custom_payload: Any = None,
                  timeout: Any = _NOT_SET, execution_profile: Any = EXEC_PROFILE_DEFAULT, paging_state: Any = None,
                  host: Any = None, execute_as: Any = None) -> Any:
    """The driver's ``Session.execute_async(query, ...)`` of ``session``, step for step."""
    custom_payload = custom_payload if custom_payload else {}
    if execute_as:
        custom_payload[_proxy_execute_key] = execute_as.encode()
    future = session._create_response_future(query, parameters, trace, custom_payload, timeout,
                                             execution_profile, paging_state, host)
    future._protocol_handler = session.client_protocol_handler
    session._on_request(future)
    future.send_request()
    return future


#: request-init listeners known to set only a future's fields and keep nothing of it (``listens_quietly``)
QUIET_LISTENERS: set = set()


def listens_quietly(listener_class: type) -> None:
    """Listeners of exactly ``listener_class`` (a class whose methods cannot be replaced: a compiled one)
    only set fields of the futures they are given and keep nothing of them: the compiled ``LeanExecute``
    sends a future such listeners saw in C as it sends one no listener saw."""
    if not listener_class.__flags__ & (1 << 8):  # Py_TPFLAGS_IMMUTABLETYPE
        raise TypeError(f"{listener_class.__name__}: only a class whose methods cannot be replaced listens quietly")
    QUIET_LISTENERS.add(listener_class)


#: the line's steps: scylla-driver's where its futures differ (``_scylla_py``)
query = _scylla_py.query if SCYLLA else cassandra_query
set_result = _scylla_py.set_result if SCYLLA else cassandra_set_result
#: scylla-driver's ``ResponseFuture._make_query_plan`` (its token-aware policy's plan followed)
scylla_plan = _scylla_py.plan
scylla_routing = _scylla_py.routing
