"""Connections of the driver's class in the state its pools read when lending a stream (shared by the
tests of borrowing from each driver line's pool)."""

from __future__ import annotations

import collections
import threading

from cassandra.connection import Connection


def connection(in_flight=0, max_request_id=127, free_ids=(), highest=-1, closed=False, orphaned=False,
               cls=Connection):
    """A driver connection (its class's ``get_request_id``), in the state borrowing reads, not connected."""
    conn = cls.__new__(cls)
    conn.lock = threading.RLock()  # (the driver's)
    conn.in_flight, conn.max_request_id = in_flight, max_request_id
    conn.request_ids = collections.deque(free_ids)
    conn.highest_request_id = highest
    conn.is_closed = closed
    conn.orphaned_threshold_reached = orphaned
    return conn


def books(conn):
    return conn.in_flight, list(conn.request_ids), conn.highest_request_id
