"""Connections of the driver's class in the state its pools read when lending a stream (shared by the
tests of borrowing from each driver line's pool)."""

from __future__ import annotations

import collections
import threading

import pytest
from cassandra.connection import Connection

from tests.connection_fields import fields_of


#: the class :func:`connection` makes by default: the driver's, or one whose first base is a ``ConnectionFields``
#: (as pyfactories' connections have it; set by :func:`fields_classes`)
default_class: type = Connection


def fields_classes(spec_module) -> dict[str, type]:
    """The connection classes to lend from: the driver's, and the driver's under the ``ConnectionFields`` of
    the implementation of ``spec_module`` (compiled or the twin)."""
    return {"dict": Connection, "fields": type("FieldsConnection", (fields_of(spec_module), Connection), {})}


def connection(in_flight=0, max_request_id=127, free_ids=(), highest=-1, closed=False, orphaned=False,
               cls=None):
    """A driver connection (its class's ``get_request_id``), in the state borrowing reads, not connected."""
    cls = cls or default_class
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


@pytest.fixture(scope="module", params=["dict", "fields"], autouse=True)
def lent_class(request, spec):
    """Every test of a module that imports this (with its ``spec`` fixture: the implementation under test)
    on the driver's connections and on connections with pyfactories' fields (:func:`connection`'s default)."""
    global default_class
    default_class = fields_classes(spec)[request.param]
    yield default_class
    default_class = Connection
