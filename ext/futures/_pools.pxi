# Included by _futures.pyx: a request's stream, borrowed from the driver's pool and given back
# (pyfactories.futures._pools_py, its twin and specification).

from cassandra import pool as _pool_module  # (its ``random``, as the driver's pool draws from it)

cdef tuple _BORROW_STEPS = _steps(((HostConnection, "borrow_connection"), (HostConnection, "_get_connection")))
cdef object _BORROW = _drivers_own(HostConnection.__dict__.get("borrow_connection"))
cdef object _GET_CONNECTION = _drivers_own(HostConnection.__dict__.get("_get_connection"))
cdef tuple _LEND_STEPS = _steps(((HostConnection, "borrow_connection"),
                                 (HostConnection, "_get_connection_for_routing_key")))
cdef object _FOR_ROUTING_KEY = _drivers_own(HostConnection.__dict__.get("_get_connection_for_routing_key"))
cdef object _GET_REQUEST_ID = _drivers_own(_Connection.__dict__.get("get_request_id"))
cdef object _deque = deque


cdef object _borrow(pool):
    """``pyfactories.futures._pools_py.borrow_connection``."""
    if _SCYLLA or not (type(pool) is HostConnection and _unchanged(_BORROW_STEPS)
                       and _bound_as(pool, "borrow_connection", _BORROW)
                       and _bound_as(pool, "_get_connection", _GET_CONNECTION)) or pool.is_shutdown:
        return pool.borrow_connection(2.0)
    conn = pool._connection
    if not conn:
        return pool.borrow_connection(2.0)
    cdef ConnectionFields fields = plain_fields(conn)
    if fields is not None:
        lent = _lend_fields(conn, fields)
        return lent if lent is not None else pool.borrow_connection(2.0)
    if conn.orphaned_threshold_reached:
        return pool.borrow_connection(2.0)
    lock = conn.lock
    if not _plain_lock(lock) or not _drivers_ids(conn):
        return pool.borrow_connection(2.0)
    lock.acquire()
    try:
        if not (conn.orphaned_threshold_reached and conn.is_closed) and conn.in_flight < conn.max_request_id:
            conn.in_flight += 1
            return conn, _request_id(conn)
    finally:
        lock.release()
    return pool.borrow_connection(2.0)


cdef object _lend_fields(conn, ConnectionFields fields):
    """:func:`_borrow`'s steps on a connection whose attributes are its fields: ``(conn, request id)``, or
    None where the driver's method is to be called."""
    if fields.orphaned_threshold_reached:
        return None
    lock = fields.lock
    if not _plain_lock(lock) or not _drivers_ids(conn):
        return None
    lock.acquire()
    try:
        if not (fields.orphaned_threshold_reached and fields.is_closed):
            # read into references of their own: comparing and adding may run Python code that replaces them
            in_flight, limit = fields.in_flight, fields.max_request_id
            if in_flight < limit:
                fields.in_flight = in_flight + 1
                return conn, _request_id(conn)
    finally:
        lock.release()
    return None


cdef inline bint _plain_lock(lock):
    """Whether ``lock`` is one of ``threading``'s own (the driver's connection lock: an ``RLock``)."""
    return type(lock) is _RLockType or type(lock) is _LockType


cdef inline bint _drivers_ids(conn) except -1:
    """Whether ``conn.get_request_id`` is the driver's, as imported (then :func:`_request_id` is its steps)."""
    return (_found_on(type(conn), "get_request_id") is <PyObject*>_GET_REQUEST_ID
            and _bound_as(conn, "get_request_id", _GET_REQUEST_ID))


cdef object _lend_unsharded(pool):
    """``pyfactories.futures._pools_py.lend_unsharded``."""
    if not (_SCYLLA and type(pool) is HostConnection and _unchanged(_LEND_STEPS)
            and _bound_as(pool, "borrow_connection", _BORROW)
            and _bound_as(pool, "_get_connection_for_routing_key", _FOR_ROUTING_KEY)) or pool.is_shutdown:
        return None
    connections = pool._connections
    if type(connections) is not dict or not connections:
        return None
    disable = pool._session.cluster.shard_aware_options.disable  # (read first, as the driver reads it)
    if disable is None or disable is False:
        if pool.host.sharding_info is not None:
            return None
    elif disable is not True:
        return None
    conn = (<dict>connections).get(None)
    if not (conn and not _closed(conn)):
        if conn is not None:
            return None
        active = [conn for conn in list((<dict>connections).values()) if not _closed(conn)]
        if not active:
            return None
        for conn in active:  # all checked before the draw: once drawn, no other connection may be lent
            if not (_free_stream(conn) and _plain_lock(_lock_of(conn)) and _drivers_ids(conn)):
                return None  # the driver's draw, which may find a connection without a free stream (its wait)
        conn = _draw(<list>active)
    elif not _drivers_ids(conn):
        return None
    lock = _lock_of(conn)
    if not _plain_lock(lock):  # (read again after a draw, which may run Python code)
        return None
    lock.acquire()
    try:
        if not _closed(conn) and _free_stream(conn):
            fields = plain_fields(conn)  # (asked again: the reads may have run Python code)
            if fields is not None:
                in_flight = fields.in_flight  # (its own reference while it is added to)
                fields.in_flight = in_flight + 1
            else:
                conn.in_flight += 1
            return conn, _request_id(conn)
    finally:
        lock.release()
    return None


# A connection's attributes as the pool reads them: from its fields where they are its attributes
# (connection_fields.pxd), each read into a reference of its own; else asked as Python asks them.

cdef inline object _closed(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.is_closed if fields is not None else conn.is_closed


cdef inline object _lock_of(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.lock if fields is not None else conn.lock


cdef inline bint _free_stream(conn) except -1:
    """``conn.in_flight < conn.max_request_id``."""
    cdef ConnectionFields fields = plain_fields(conn)
    if fields is None:
        return conn.in_flight < conn.max_request_id
    in_flight, limit = fields.in_flight, fields.max_request_id
    return in_flight < limit


def lend_unsharded(pool):
    """``pyfactories.futures._pools_py.lend_unsharded``."""
    return _lend_unsharded(pool)


cdef object _request_id(conn):
    """``pyfactories.futures._pools_py.request_id``."""
    cdef ConnectionFields fields = plain_fields(conn)
    ids = fields.request_ids if fields is not None else conn.request_ids
    if type(ids) is _deque and ids:
        return ids.popleft()
    try:
        return ids.popleft()
    except IndexError:
        new_request_id = conn.highest_request_id + 1
        assert new_request_id <= conn.max_request_id
        conn.highest_request_id = new_request_id
        return new_request_id


def borrow_connection(pool):
    """``pyfactories.futures._pools_py.borrow_connection``."""
    return _borrow(pool)


def request_id(conn):
    """``pyfactories.futures._pools_py.request_id``."""
    return _request_id(conn)


cdef tuple _RETURN_STEPS = _steps(((HostConnection, "return_connection"),))


cdef inline bint _bound_as(obj, str name, fn) except -1:
    """Whether ``obj.<name>`` is the class's ``fn`` bound to ``obj`` (nothing of the object's own in front of
    it). Asked through the generic lookup, which reads an object's attributes without making its
    ``__dict__``: made by two threads at once, CPython 3.11 can free that dict twice."""
    return _is_bound(getattr(obj, name, None), obj, fn)


cdef inline bint _is_bound(method, obj, fn) noexcept:
    """Whether ``method`` is ``fn`` bound to ``obj``."""
    return (PyMethod_Check(method) and PyMethod_GET_FUNCTION(method) is <PyObject*>fn
            and PyMethod_GET_SELF(method) is <PyObject*>obj)


cdef object _drivers_own(fn):
    """``fn`` if it is the driver's own function (defined in its package, not a wrapper put in its place
    before this module was imported); otherwise something no lookup finds, so the fast path is never taken."""
    module = getattr(fn, "__module__", None)
    if type(module) is str and module.startswith("cassandra.") and getattr(fn, "__wrapped__", None) is None:
        return fn
    return object()


cdef object _RETURN = _drivers_own(HostConnection.__dict__.get("return_connection"))


cdef _return_connection(pool, connection):
    # the driver's pool, its method as imported and not replaced on the pool: its steps, here
    condition = (pool._stream_available_condition if type(pool) is HostConnection and _unchanged(_RETURN_STEPS)
                 and _bound_as(pool, "return_connection", _RETURN) else None)
    if type(condition) is not _Condition:
        pool.return_connection(connection)
        return
    cdef ConnectionFields fields = plain_fields(connection)
    lock = fields.lock if fields is not None else connection.lock
    if _plain_lock(lock):  # what ``with`` does, without its two bound methods
        lock.acquire()
        try:
            if fields is not None:
                in_flight = fields.in_flight  # (its own reference while it is subtracted from)
                fields.in_flight = in_flight - 1
            else:
                connection.in_flight -= 1
        finally:
            lock.release()
    else:
        with lock:
            connection.in_flight -= 1
    lock = condition._lock  # what ``with condition`` takes
    if _plain_lock(lock):
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
    fields = plain_fields(connection)  # (asked again: waking a waiter may have run Python code)
    if ((fields.is_defunct if fields is not None else connection.is_defunct)
            or (fields.is_closed if fields is not None else connection.is_closed) or connection in pool._trash):
        pool.return_connection(connection, stream_was_orphaned=True)  # the rest of the driver's method


def return_connection(pool, connection):
    """``pyfactories.futures._pools_py.return_connection``."""
    _return_connection(pool, connection)
