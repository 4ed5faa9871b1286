"""A request's stream, borrowed from the driver's pool and given back: part of the pure-Python twin (and
specification) of the compiled ``pyfactories.futures._futures`` (its ``_pools.pxi``), used by
:mod:`pyfactories.futures._futures_py` and :mod:`pyfactories.futures._scylla_py`.

Each function does what the pool's method does on its first turn, where that turn lends (or gives back)
at once; anything else (a pool shut down, without a connection, replacing one, without a free stream, a
shard to choose, any of the methods replaced on a class or an object) is the driver's method, with its
waits and errors.
"""

from __future__ import annotations

import threading
from typing import Any

from cassandra import pool as _pool_module
from cassandra.connection import Connection
from cassandra.pool import HostConnection

from .. import _support
from ._plans_py import _steps, _type_lookup, _unchanged, bound_as, drivers_own

__all__ = ["borrow_connection", "lend_unsharded", "request_id", "return_connection"]

#: scylla-driver's pool (per-shard connections) rather than cassandra-driver's (one connection)
SHARDED = _support.PROTOCOL_FEATURES

#: the pool's methods :func:`borrow_connection` follows, and the connection's: replaced on the class or the
#: object, they are called
_BORROW_STEPS = _steps(((HostConnection, "borrow_connection"), (HostConnection, "_get_connection")))
#: the same for :func:`lend_unsharded` (scylla-driver's pool)
_LEND_STEPS = _steps(((HostConnection, "borrow_connection"), (HostConnection, "_get_connection_for_routing_key")))
_BORROW = drivers_own(vars(HostConnection).get("borrow_connection"))
_GET_CONNECTION = drivers_own(vars(HostConnection).get("_get_connection"))
_FOR_ROUTING_KEY = drivers_own(vars(HostConnection).get("_get_connection_for_routing_key"))
_GET_REQUEST_ID = drivers_own(vars(Connection).get("get_request_id"))


_LOCKS = (type(threading.Lock()), type(threading.RLock()))


def _plain_lock(lock: Any) -> bool:
    """Whether ``lock`` is one of ``threading``'s own (the driver's connection lock: an ``RLock``)."""
    return type(lock) in _LOCKS


def _drivers_ids(conn: Any) -> bool:
    """Whether ``conn.get_request_id`` is the driver's, as imported (then :func:`request_id` is its steps)."""
    return _type_lookup(type(conn), "get_request_id") is _GET_REQUEST_ID and bound_as(conn, "get_request_id",
                                                                                      _GET_REQUEST_ID)


def borrow_connection(pool: Any) -> tuple:
    """``pool.borrow_connection(2.0)``: ``(connection, request id)``. For cassandra-driver's ``HostConnection``
    whose connection has a stream free, its first turn (in the connection's lock) without its clock; a
    pool shut down, without a connection, replacing it or without a free stream is the driver's method's."""
    ours = (not SHARDED and type(pool) is HostConnection and _unchanged(_BORROW_STEPS)
            and bound_as(pool, "borrow_connection", _BORROW) and bound_as(pool, "_get_connection", _GET_CONNECTION))
    conn = pool._connection if ours and not pool.is_shutdown else None
    if not conn or conn.orphaned_threshold_reached or not _drivers_ids(conn):
        return pool.borrow_connection(2.0)
    with conn.lock:
        if not (conn.orphaned_threshold_reached and conn.is_closed) and conn.in_flight < conn.max_request_id:
            conn.in_flight += 1
            return conn, request_id(conn)
    return pool.borrow_connection(2.0)


def lend_unsharded(pool: Any) -> tuple | None:
    """``(connection, request id)`` as scylla-driver's ``HostConnection.borrow_connection`` lends them on its
    first turn, whatever the request's routing key, keyspace and table, when its pool picks no shard:
    shard awareness is off, or the host has no sharding information (a Cassandra node). The pool's
    connection to no shard if it has one, else one of its open connections drawn with ``random.choice``
    as the driver draws it (against Cassandra, its one connection), when every open one has a free stream.
    ``None`` where the driver's method is to be called: a shard to pick (a Scylla node's pool, which may
    also open a connection to it), no open connection, one without a free stream (the driver may draw it
    and wait), a ``get_request_id`` replaced or a lock not ``threading``'s. A connection drawn is the one lent,
    unless another thread takes its last stream before its lock is taken: then the driver's method draws again."""
    if not (SHARDED and type(pool) is HostConnection and _unchanged(_LEND_STEPS)
            and bound_as(pool, "borrow_connection", _BORROW)
            and bound_as(pool, "_get_connection_for_routing_key", _FOR_ROUTING_KEY)) or pool.is_shutdown:
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
    conn = connections.get(None)
    if not (conn and not conn.is_closed):
        if conn is not None:
            return None
        active = [conn for conn in list(connections.values()) if not conn.is_closed]
        if not active or not all(conn.in_flight < conn.max_request_id and _plain_lock(conn.lock) and _drivers_ids(conn)
                                 for conn in active):  # all checked before the draw: once drawn, no other is lent
            return None  # the driver's draw, which may find a connection without a free stream (its wait)
        conn = _pool_module.random.choice(active)
    elif not _drivers_ids(conn):
        return None
    lock = conn.lock
    if not _plain_lock(lock):  # (read again after a draw, which may run Python code)
        return None
    with lock:
        if not conn.is_closed and conn.in_flight < conn.max_request_id:
            conn.in_flight += 1
            return conn, request_id(conn)
    return None


def request_id(conn: Any) -> Any:
    """``Connection.get_request_id()`` (in the connection's lock)."""
    try:
        return conn.request_ids.popleft()
    except IndexError:
        new_request_id = conn.highest_request_id + 1
        assert new_request_id <= conn.max_request_id  # (as the driver's: its in-flight count guarantees it)
        conn.highest_request_id = new_request_id
        return new_request_id


#: the pool's method :func:`return_connection` follows: replaced on the class or the pool, it is called
_RETURN_STEPS = _steps(((HostConnection, "return_connection"),))
_RETURN = drivers_own(vars(HostConnection).get("return_connection"))


def return_connection(pool: Any, connection: Any) -> None:
    """``pool.return_connection(connection)``; for the driver's ``HostConnection`` (both lines' begin the
    same way), a thread waiting for a stream is woken only if there is one (in the pool's lock, as the
    driver's ``notify``), and the rest of the method is the driver's only for a connection defunct, closed
    or in the pool's trash."""
    ours = (type(pool) is HostConnection and _unchanged(_RETURN_STEPS)
            and bound_as(pool, "return_connection", _RETURN))
    condition = pool._stream_available_condition if ours else None
    if type(condition) is not threading.Condition:
        pool.return_connection(connection)
        return
    with connection.lock:
        connection.in_flight -= 1
    with condition:
        if condition._waiters:
            condition.notify()
    if connection.is_defunct or connection.is_closed or connection in pool._trash:
        pool.return_connection(connection, stream_was_orphaned=True)  # the rest of the driver's method
