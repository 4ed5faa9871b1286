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
    if not conn or get_orphaned_threshold_reached(conn):
        return pool.borrow_connection(2.0)
    lock = get_lock(conn)
    if not _plain_lock(lock) or not _drivers_ids(conn):
        return pool.borrow_connection(2.0)
    lock.acquire()
    try:
        if (not (get_orphaned_threshold_reached(conn) and get_is_closed(conn))
                and get_in_flight(conn) < get_max_request_id(conn)):
            in_flight = get_in_flight(conn)  # ``conn.in_flight += 1``: read again, added in place, stored
            in_flight += 1
            set_in_flight(conn, in_flight)
            return conn, _request_id(conn)
    finally:
        lock.release()
    return pool.borrow_connection(2.0)


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
    if not (conn and not get_is_closed(conn)):
        if conn is not None:
            return None
        active = [conn for conn in list((<dict>connections).values()) if not get_is_closed(conn)]
        if not active:
            return None
        for conn in active:  # all checked before the draw: once drawn, no other connection may be lent
            if not (get_in_flight(conn) < get_max_request_id(conn) and _plain_lock(get_lock(conn))
                    and _drivers_ids(conn)):
                return None  # the driver's draw, which may find a connection without a free stream (its wait)
        conn = _draw(<list>active)
    elif not _drivers_ids(conn):
        return None
    lock = get_lock(conn)
    if not _plain_lock(lock):  # (read again after a draw, which may run Python code)
        return None
    lock.acquire()
    try:
        if not get_is_closed(conn) and get_in_flight(conn) < get_max_request_id(conn):
            in_flight = get_in_flight(conn)  # ``conn.in_flight += 1``: read again, added in place, stored
            in_flight += 1
            set_in_flight(conn, in_flight)
            return conn, _request_id(conn)
    finally:
        lock.release()
    return None


def lend_unsharded(pool):
    """``pyfactories.futures._pools_py.lend_unsharded``."""
    return _lend_unsharded(pool)


cdef object _request_id(conn):
    """``pyfactories.futures._pools_py.request_id``."""
    ids = get_request_ids(conn)
    if type(ids) is _deque and ids:
        return ids.popleft()
    try:
        return ids.popleft()
    except IndexError:
        new_request_id = get_highest_request_id(conn) + 1
        assert new_request_id <= get_max_request_id(conn)
        set_highest_request_id(conn, new_request_id)
        return new_request_id


def borrow_connection(pool):
    """``pyfactories.futures._pools_py.borrow_connection``."""
    return _borrow(pool)


def request_id(conn):
    """``pyfactories.futures._pools_py.request_id``."""
    return _request_id(conn)


cdef tuple _RETURN_STEPS = _steps(((HostConnection, "return_connection"),))


cdef object _RETURN = _drivers_own(HostConnection.__dict__.get("return_connection"))


cdef _return_connection(pool, connection):
    # the driver's pool, its method as imported and not replaced on the pool: its steps, here
    condition = (pool._stream_available_condition if type(pool) is HostConnection and _unchanged(_RETURN_STEPS)
                 and _bound_as(pool, "return_connection", _RETURN) else None)
    if type(condition) is not _Condition:
        pool.return_connection(connection)
        return
    lock = get_lock(connection)
    if _plain_lock(lock):  # what ``with`` does, without its two bound methods
        lock.acquire()
        try:
            in_flight = get_in_flight(connection)  # ``connection.in_flight -= 1``
            in_flight -= 1
            set_in_flight(connection, in_flight)
        finally:
            lock.release()
    else:
        with lock:
            in_flight = get_in_flight(connection)  # ``connection.in_flight -= 1``
            in_flight -= 1
            set_in_flight(connection, in_flight)
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
    if get_is_defunct(connection) or get_is_closed(connection) or connection in pool._trash:
        pool.return_connection(connection, stream_was_orphaned=True)  # the rest of the driver's method


def return_connection(pool, connection):
    """``pyfactories.futures._pools_py.return_connection``."""
    _return_connection(pool, connection)
