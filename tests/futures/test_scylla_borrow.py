"""Borrowing a stream from scylla-driver's per-shard ``HostConnection`` where it picks no shard (shard awareness
off, or a host without sharding information: a Cassandra node), compiled (``c``) and pure Python (``py``),
against the driver's own ``borrow_connection`` on the same state: the same connection and request id, the
same books. Where the pool would pick a shard, open a connection, wait or fail, nothing is lent here (the
driver's method is then called). Collected on scylla-driver only (``conftest.py``)."""

from __future__ import annotations

import collections
import importlib
import random
import threading

import pytest
from cassandra.connection import Connection
from cassandra.pool import HostConnection
from hypothesis import given, settings
from hypothesis import strategies as st

from pyfactories.futures._scylla_py import TABLET_VERSIONS

from . import pools
from .pools import books, connection, lent_class  # noqa: F401 (autouse: both kinds of connection)

MODULES = {"c": "pyfactories.futures._futures", "py": "pyfactories.futures._pools_py"}


@pytest.fixture(scope="module", params=sorted(MODULES), ids=sorted(MODULES))
def spec(request):
    return importlib.import_module(MODULES[request.param])


class Submits:
    """A session's ``submit``, recorded and not run, and its cluster's shard awareness switch."""

    def __init__(self, disable):
        self.calls = []
        self.cluster = type("Cluster", (), {})()
        self.cluster.shard_aware_options = type("ShardAwareOptions", (), {"disable": disable})()

    def submit(self, fn, *args):
        self.calls.append((fn.__name__, args))


class Host:
    def __init__(self, sharding_info):
        self.sharding_info, self.host_id = sharding_info, "host id"


class Sharding:
    """A Scylla node's sharding information: every token on shard ``shard``."""

    shards_count = 2

    def __init__(self, shard=0):
        self.shard = shard

    def shard_id_from_token(self, token):
        return self.shard


def pool(connections, shut_down=False, disable=None, sharding_info=None):
    """A driver ``HostConnection`` lending from ``connections`` (shard id -> connection), without connecting."""
    made = HostConnection.__new__(HostConnection)
    made.host = Host(sharding_info)
    made.is_shutdown = shut_down
    made._connections = connections
    made._connecting = set()
    made._trash = set()
    made._lock = threading.Lock()
    made._stream_available_condition = threading.Condition(made._lock)
    made._is_replacing = False
    made._keyspace = None
    made.tablets_routing_v1 = made.supports_tablet_routing = False
    made._session = Submits(disable)
    return made


def drivers_borrow(lender, routing_key=b"\x00\x01", keyspace="ks", table="t"):
    """The driver's method, called as scylla-driver's futures call it for a statement."""
    routing = {"routing_token": None} if TABLET_VERSIONS else {}
    return lender.borrow_connection(timeout=2.0, routing_key=routing_key, keyspace=keyspace, table=table, **routing)


@settings(max_examples=200, deadline=None)
@given(in_flight=st.integers(0, 5), spare=st.integers(1, 5), free_ids=st.lists(st.integers(0, 200), max_size=4),
       highest=st.integers(-1, 120), unsharded=st.sampled_from(["no sharding information", "shard awareness off"]),
       disable=st.sampled_from([None, False]), routing_key=st.sampled_from([None, b"", b"\x00\x01"]),
       key=st.sampled_from([0, None]))
def test_a_free_stream_is_lent_as_the_drivers(spec, in_flight, spare, free_ids, highest, unsharded, disable,
                                              routing_key, key):
    """The pool's connection to no shard, or (as against Cassandra, under shard 0) its one connection."""
    lent = []
    for borrow in (spec.lend_unsharded, lambda p: drivers_borrow(p, routing_key)):
        conn = connection(in_flight, in_flight + spare, free_ids, min(highest, in_flight + spare - 1))
        lender = (pool({key: conn}, disable=True, sharding_info=Sharding()) if unsharded == "shard awareness off"
                  else pool({key: conn}, disable=disable))
        random.seed(7)
        got = borrow(lender)
        assert got[0] is conn
        lent.append((got[1], books(conn), lender._session.calls, random.random()))
    assert lent[0] == lent[1]


@settings(max_examples=100, deadline=None)
@given(states=st.lists(st.tuples(st.integers(0, 2), st.booleans()), min_size=1, max_size=4), seed=st.integers(0, 9))
def test_a_connection_is_drawn_as_the_driver_draws_it(spec, states, seed):
    """Several connections (none to no shard), each open one with a free stream: the same draw from
    ``random`` and the same connection lent as the driver's. Otherwise nothing is lent and nothing drawn:
    the driver's method then draws, and may wait on the one it drew."""
    def lender():
        return pool({shard: connection(in_flight, max_request_id=2, closed=closed)
                     for shard, (in_flight, closed) in enumerate(states)})

    random.seed(seed)
    ours, conns = lender(), None
    got = spec.lend_unsharded(ours)
    if not all(closed or in_flight < 2 for in_flight, closed in states) or all(closed for _, closed in states):
        assert got is None and random.random() == random.Random(seed).random()
        return
    outcomes = []
    for borrow, made in ((lambda p: got, ours), (drivers_borrow, None)):
        made = made or lender()
        if borrow is drivers_borrow:
            random.seed(seed)
        lent = borrow(made)
        conns = list(made._connections.values())
        outcomes.append((conns.index(lent[0]), lent[1], [books(c) for c in conns], random.random()))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("case", ["shut down", "no connections", "not a dict", "only closed connections",
                                  "a closed connection to no shard", "no free stream", "a shard to pick",
                                  "a lying switch"])
def test_nothing_is_lent_where_the_driver_would_do_more(spec, case):
    conn = connection(in_flight=2, max_request_id=2) if case == "no free stream" else connection(
        closed=case in ("only closed connections", "a closed connection to no shard"))
    lender = pool({None if case == "a closed connection to no shard" else 0: conn}, shut_down=case == "shut down",
                  sharding_info=Sharding() if case == "a shard to pick" else None,
                  disable=0 if case == "a lying switch" else None)
    if case == "no connections":
        lender._connections = {}
    elif case == "not a dict":
        lender._connections = collections.OrderedDict({0: conn})
    random.seed(3)
    assert spec.lend_unsharded(lender) is None
    assert books(conn) == ((2, [], -1) if case == "no free stream" else (0, [], -1))
    assert lender._session.calls == [] and lender._connecting == set()
    assert random.random() == random.Random(3).random()  # nothing drawn


def test_replaced_methods_are_never_bypassed(spec, monkeypatch):
    """The pool's ``borrow_connection`` or ``_get_connection_for_routing_key`` replaced on the class or the
    pool, or the connection's ``get_request_id``: nothing is lent, so the driver's call reaches them."""
    conn = connection(free_ids=[5])
    lender = pool({None: conn})
    for name in ("borrow_connection", "_get_connection_for_routing_key"):
        with monkeypatch.context() as patched:
            patched.setattr(HostConnection, name, lambda self, *args, **kwargs: ("class", args, kwargs))
            assert spec.lend_unsharded(lender) is None
        setattr(lender, name, lambda *args, **kwargs: ("pool", args, kwargs))
        assert spec.lend_unsharded(lender) is None
        delattr(lender, name)

    class OwnIds(Connection):
        def get_request_id(self):
            return "own id"

    own = connection(cls=OwnIds)
    assert spec.lend_unsharded(pool({None: own})) is None and own.in_flight == 0
    conn.get_request_id = lambda: "instance id"
    assert spec.lend_unsharded(lender) is None and books(conn) == (0, [5], -1)
    del conn.get_request_id
    assert spec.lend_unsharded(lender) == (conn, 5)


def test_a_lying_deque_raises_as_the_drivers(spec):
    class Lying(collections.deque):
        def popleft(self):
            raise RuntimeError("no id for you")

    for borrow in (spec.lend_unsharded, drivers_borrow):
        conn = connection(free_ids=[1])
        conn.request_ids = Lying([1])
        with pytest.raises(RuntimeError, match="no id for you"):
            borrow(pool({None: conn}))
        assert conn.in_flight == 1 and not conn.lock._is_owned()


class Meddling(int):
    """A stream count whose comparisons run Python code: they empty the pool and close its connections."""

    lender = None

    def __lt__(self, other):
        lender = Meddling.lender
        for conn in list(lender._connections.values()):
            conn.is_closed = True
        lender._connections.clear()
        return int(self) < other


@pytest.mark.parametrize("shards", [1, 3])
def test_counts_that_change_the_pool_while_read_lend_nothing_wrong(spec, shards):
    """Whatever the counts' comparisons do to the pool while it is read, a stream is lent only of a
    connection that was the pool's, counted once, or nothing is lent."""
    conns = {shard: connection(free_ids=[shard]) for shard in range(shards)}
    for conn in conns.values():
        conn.in_flight = Meddling(0)
    lender = pool(dict(conns))
    Meddling.lender = lender
    try:
        got = spec.lend_unsharded(lender)
    finally:
        Meddling.lender = None
    if got is not None:
        assert got[0] in conns.values() and got[0].in_flight == 1 and got[1] == list(conns.values()).index(got[0])
    assert sum(conn.in_flight for conn in conns.values()) == (0 if got is None else 1)


@pytest.mark.parametrize("odd", ["its own request ids", "a lock not threading's"])
def test_a_connection_the_draw_could_find_that_is_not_plain_stops_the_draw(spec, odd):
    """Every connection the draw could find is checked before drawing: one the compiled steps would not
    lend means nothing is drawn here (the driver draws once, and lends that one)."""
    import threading as _threading

    class OwnIds(Connection):
        def get_request_id(self):
            return "own id"

    conns = {0: connection(free_ids=[0]), 1: connection(free_ids=[1], cls=OwnIds if odd == "its own request ids"
                                                         else Connection)}
    if odd == "a lock not threading's":
        conns[1].lock = _threading._PyRLock()
    lender = pool(conns)
    random.seed(1)
    assert spec.lend_unsharded(lender) is None
    assert random.random() == random.Random(1).random()  # nothing drawn
    assert [c.in_flight for c in conns.values()] == [0, 0]
