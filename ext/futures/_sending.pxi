# Included by _futures.pyx: pyfactories.futures._futures_py's LeanExecute (its docstring is the
# specification), the steps of the driver's Session.execute_async and (cassandra-driver's)
# ResponseFuture.send_request taken in C while every method they call on the session and the future is
# the one they would call: the class's, as imported, and none of the object's own. A future is asked that
# only while no one else has seen it (no request init listener but pyfactories' own, which set fields
# and keep nothing): a new object has no attributes of its own, and its dict is never made from here
# (CPython 3.11 can free one made by two threads at once).

from cassandra.auth import _proxy_execute_key

import time as _time

cdef object _NoHostAvailable = NoHostAvailable
#: pyfactories.futures._futures_py.DRIVERS_EXECUTE_ASYNC, and the driver's Session._on_request (each only
#: if it is the driver's own function: one put in its place before this module was imported is called)
DRIVERS_EXECUTE_ASYNC = _drivers_own(Session.__dict__.get("execute_async"))
cdef object _DRIVERS_EXECUTE_ASYNC = DRIVERS_EXECUTE_ASYNC
cdef object _DRIVERS_ON_REQUEST = _drivers_own(Session.__dict__.get("_on_request"))
# what a future sent in C has of the driver's (on scylla-driver, send_request falls back to the control
# connection: its own method sends) and of this module's
cdef object _DRIVERS_CLEAR_CALLBACKS = _drivers_own(ResponseFuture.__dict__.get("clear_callbacks"))
cdef tuple _SENDS = (("send_request", _drivers_own(ResponseFuture.__dict__.get("send_request"))), ("_query", query),
                     ("add_callbacks", add_callbacks), ("clear_callbacks", _DRIVERS_CLEAR_CALLBACKS))


cdef class LeanExecute:
    """``pyfactories.futures._futures_py.LeanExecute``."""

    cdef readonly object session, previous

    def __init__(self, session):
        self.session = session
        self.previous = session.__dict__.get("execute_async")

    def __call__(self, *args, **kwargs):
        session = self.session
        cls = type(session)
        found = _found_on(cls, "execute_async")
        if found is not <PyObject*>_DRIVERS_EXECUTE_ASYNC:  # what ``session.execute_async`` would be without this
            method = <object>found if found is not NULL else getattr(cls, "execute_async")
            bound = method.__get__(session, cls) if hasattr(type(method), "__get__") else method
            return bound(*args, **kwargs)
        return execute_async(session, *args, **kwargs)


def execute_async(session, query, parameters=None, trace=False, custom_payload=None, timeout=_NOT_SET,
                  execution_profile=EXEC_PROFILE_DEFAULT, paging_state=None, host=None, execute_as=None):
    """``pyfactories.futures._futures_py.execute_async``."""
    cdef bint untouched = False
    return _execute(session, query, parameters, trace, custom_payload, timeout, execution_profile, paging_state,
                    host, execute_as, &untouched)


cdef bint _executes_as_driver(session) except -1:
    """Whether ``session.execute_async`` is the driver's method as imported, or a :class:`LeanExecute`
    in front of it (asked without making the session's ``__dict__``)."""
    if _found_on(type(session), "execute_async") is not <PyObject*>_DRIVERS_EXECUTE_ASYNC:
        return False
    own = getattr(session, "execute_async", None)
    return type(own) is LeanExecute or _is_bound(own, session, _DRIVERS_EXECUTE_ASYNC)


cdef object _execute(session, query, parameters, trace, custom_payload, timeout, execution_profile, paging_state,
                     host, execute_as, bint* untouched):
    """``Session.execute_async``'s steps; ``untouched``: whether the future was sent in C, nothing else
    having seen it."""
    custom_payload = custom_payload if custom_payload else {}
    if execute_as:
        custom_payload[_proxy_execute_key] = execute_as.encode()
    create = session._create_response_future
    cdef bint lean = type(create) is LeanCreate  # (any other code given the arguments has seen the future)
    if lean:
        future = _create((<LeanCreate>create).future_class, (<LeanCreate>create).driver, session, query, parameters,
                         trace, custom_payload, timeout, execution_profile, paging_state, host)
    else:
        future = create(query, parameters, trace, custom_payload, timeout, execution_profile, paging_state, host)
    future._protocol_handler = session.client_protocol_handler
    if (_found_on(type(session), "_on_request") is not <PyObject*>_DRIVERS_ON_REQUEST
            or not _bound_as(session, "_on_request", _DRIVERS_ON_REQUEST)):
        session._on_request(future)
    elif _on_request(future, session._request_init_callbacks) and lean and _sends_as_driver(<LeanCreate>create, future):
        untouched[0] = True
        _send_request(<FutureFields>future)
        return future
    future.send_request()
    return future


cdef bint _on_request(future, listeners) except -1:
    """``Session._on_request(future)``; whether every listener was of a class :func:`listens_quietly`."""
    cdef bint quiet = True
    if not listeners:
        return True
    for fn, args, kwargs in listeners:
        quiet = quiet and type(fn) in _QUIET_LISTENERS
        if kwargs:
            fn(future, *args, **kwargs)
        elif args:
            fn(future, *args)
        else:
            fn(future)
    return quiet


cdef set _QUIET_LISTENERS = set()
cdef unsigned long _IMMUTABLE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE


def listens_quietly(type listener_class):
    """``pyfactories.futures._futures_py.listens_quietly``."""
    if not (<PyTypeObject*>listener_class).tp_flags & _IMMUTABLE:
        raise TypeError(f"{listener_class.__name__}: only a class whose methods cannot be replaced listens quietly")
    _QUIET_LISTENERS.add(listener_class)


cdef tuple _sends_of(type future_class):
    """What :func:`_sends_as_driver` checks of ``future_class`` (its ``steps``), or None if the class does
    not already find the driver's and this module's methods of :data:`_SENDS`."""
    cdef tuple recorded = _steps(tuple([(future_class, name) for name, _ in _SENDS]))
    for i in range(len(_SENDS)):
        if len(recorded[i + 1]) != 3 or recorded[i + 1][2] is not _SENDS[i][1]:
            return None
    return recorded


cdef bint _sends_as_driver(LeanCreate create, future) except -1:
    """Whether ``future``, just made by ``create``, is of its class, whose ``send_request``, ``_query``,
    ``add_callbacks`` and ``clear_callbacks`` are still the driver's and this module's (asked of a future no
    one else has seen: none of them can be its own)."""
    return create.sends is not None and type(future) is create.future_class and _unchanged(create.sends)


cdef void _send_request(FutureFields future) except *:
    """``ResponseFuture.send_request()`` (cassandra-driver's) of a future :func:`_sends_as_driver`."""
    if _SCYLLA:
        future.send_request()
        return
    for host in future.query_plan:
        req_id = _cassandra_query(future, host, None, None)
        if req_id is not None:
            future._req_id = req_id
            return
        if future.timeout is not None and _time.time() - future._start_time > future.timeout:  # (the driver's clock)
            future._on_timeout()
            return
    future._set_final_exception(_NoHostAvailable("Unable to complete the operation against any hosts",
                                                 future._errors))


cdef void _clear_callbacks(FutureFields future) except *:
    """``ResponseFuture.clear_callbacks()``, leaving the listeners as a lean future starts with them: None
    until one is added (two empty lists fewer for every result a caller keeps)."""
    lock = future._callback_lock
    if type(lock) is _LockType:
        lock.acquire()
        try:
            future._callbacks = None
            future._errbacks = None
        finally:
            lock.release()
    else:
        with lock:
            future._callbacks = None
            future._errbacks = None
