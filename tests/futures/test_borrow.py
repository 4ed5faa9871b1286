"""Borrowing a stream from the driver's ``HostConnection``, compiled (``c``) and pure Python (``py``), against
the driver's own ``borrow_connection`` on the same state: the same connection and request id, the same
books (streams in flight, ids handed out), the driver's errors and waits where the pool cannot lend at once,
and whatever replaced the driver's methods called instead."""

from __future__ import annotations

import collections
import importlib
import threading

import pytest
from cassandra.connection import Connection, ConnectionException
from cassandra.pool import HostConnection, NoConnectionsAvailable
from hypothesis import given, settings
from hypothesis import strategies as st

from . import pools
from .pools import books, connection, lent_class  # noqa: F401 (autouse: both kinds of connection)

MODULES = {"c": "pyfactories.futures._futures", "py": "pyfactories.futures._futures_py"}


@pytest.fixture(scope="module", params=sorted(MODULES), ids=sorted(MODULES))
def spec(request):
    return importlib.import_module(MODULES[request.param])


class Submits:
    """A session's ``submit``, recorded and not run."""

    def __init__(self):
        self.calls = []

    def submit(self, fn, *args):
        self.calls.append((fn.__name__, args))


def pool(conn, shut_down=False):
    """A driver ``HostConnection`` lending ``conn``, without connecting anything."""
    made = HostConnection.__new__(HostConnection)
    made.host = "127.0.0.1"
    made.is_shutdown = shut_down
    made._connection = conn
    made._lock = threading.Lock()
    made._stream_available_condition = threading.Condition(made._lock)
    made._is_replacing = False
    made._session = Submits()
    return made


@settings(max_examples=200, deadline=None)
@given(in_flight=st.integers(0, 5), spare=st.integers(1, 5), free_ids=st.lists(st.integers(0, 200), max_size=4),
       highest=st.integers(-1, 120), closed=st.booleans())
def test_a_free_stream_is_lent_as_the_drivers(spec, in_flight, spare, free_ids, highest, closed):
    lent = []
    for borrow in (spec.borrow_connection, lambda p: p.borrow_connection(2.0)):
        conn = connection(in_flight, in_flight + spare, free_ids, min(highest, in_flight + spare - 1), closed)
        got = borrow(pool(conn))
        assert got[0] is conn
        lent.append((got[1], books(conn)))
    assert lent[0] == lent[1]


def test_a_pool_that_cannot_lend_at_once_is_the_drivers(spec):
    with pytest.raises(ConnectionException, match="is shutdown"):
        spec.borrow_connection(pool(connection(), shut_down=True))
    with pytest.raises(NoConnectionsAvailable):
        spec.borrow_connection(pool(None))
    full = connection(in_flight=2, max_request_id=2)
    lender = pool(full)
    with pytest.raises(NoConnectionsAvailable, match="All request IDs are currently in use"):
        spec.borrow_connection(lender)  # after the driver's wait for a stream (two seconds)
    assert books(full) == (2, [], -1)


def test_a_connection_past_its_orphaned_streams_is_replaced_as_the_drivers(spec):
    conn = connection(orphaned=True, free_ids=[9])
    lender = pool(conn)
    assert spec.borrow_connection(lender) == (conn, 9)
    assert lender._is_replacing and [name for name, _ in lender._session.calls] == ["_replace"]


def test_a_stream_freed_while_waiting_is_lent(spec):
    conn = connection(in_flight=1, max_request_id=1)
    lender = pool(conn)

    def give_back():
        with conn.lock:
            conn.in_flight -= 1
            conn.request_ids.append(0)
        with lender._stream_available_condition:
            lender._stream_available_condition.notify()

    timer = threading.Timer(0.2, give_back)
    timer.start()
    try:
        assert spec.borrow_connection(lender) == (conn, 0)
    finally:
        timer.join()
    assert books(conn) == (1, [], -1)


def test_replaced_methods_are_the_ones_called(spec, monkeypatch):
    """The pool's ``borrow_connection`` or ``_get_connection`` replaced on the class or the pool, or the
    connection's ``get_request_id``: the replacement answers."""
    conn = connection(free_ids=[5])
    lender = pool(conn)
    with monkeypatch.context() as patched:
        patched.setattr(HostConnection, "borrow_connection", lambda self, timeout: ("class", timeout))
        assert spec.borrow_connection(lender) == ("class", 2.0)
    with monkeypatch.context() as patched:
        patched.setattr(HostConnection, "_get_connection", lambda self: other)
        other = connection(free_ids=[6])
        assert spec.borrow_connection(lender) == (other, 6)
    lender.borrow_connection = lambda timeout: ("pool", timeout)
    assert spec.borrow_connection(lender) == ("pool", 2.0)
    del lender.borrow_connection

    class Counting(Connection):
        def get_request_id(self):
            return "own id"

    own = connection(cls=Counting)
    assert spec.borrow_connection(pool(own)) == (own, "own id") and own.in_flight == 1
    conn.get_request_id = lambda: "instance id"
    assert spec.borrow_connection(lender) == (conn, "instance id") and books(conn) == (1, [5], -1)
    assert spec.borrow_connection(pool(connection(free_ids=[7])))[1] == 7


def test_a_lying_deque_raises_as_the_drivers(spec):
    class Lying(collections.deque):
        def popleft(self):
            raise RuntimeError("no id for you")

    for borrow in (spec.borrow_connection, lambda p: p.borrow_connection(2.0)):
        conn = connection(free_ids=[1])
        conn.request_ids = Lying([1])
        with pytest.raises(RuntimeError, match="no id for you"):
            borrow(pool(conn))
        assert conn.in_flight == 1 and not conn.lock._is_owned()


def test_borrowing_reads_what_a_subclass_puts_in_front_of_a_field(spec):
    fields_class = pools.fields_classes(spec)["fields"].__mro__[1]
    reads = []

    class Counting(fields_class, Connection):
        @property
        def max_request_id(self):
            reads.append("max_request_id")
            return 9

    conn = Counting.__new__(Counting)
    conn.lock, conn.in_flight, conn.request_ids = threading.RLock(), 0, collections.deque([3])
    plain_class = type("Plain", (fields_class, Connection), {})
    plain = plain_class.__new__(plain_class)
    plain.lock, plain.in_flight, plain.request_ids, plain.max_request_id = threading.RLock(), 0, collections.deque([3]), 9
    lender = pool(plain)
    assert spec.borrow_connection(lender) == (plain, 3) and plain.in_flight == 1
    lender._connection = conn
    assert spec.borrow_connection(lender) == (conn, 3) and reads and conn.in_flight == 1
