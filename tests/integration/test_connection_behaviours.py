"""The driver's behaviour kept on ``pyfactories.connection`` (our connection class, fast path on)
against the real node, next to the driver's own ``LibevConnection`` as the reference: paging,
tracing, lightweight transactions, speculative executions and retries, schema changes, heartbeats,
a node that goes away (simulated by a proxy: the real node is never touched) and shutdown with
requests in flight."""

from __future__ import annotations

import ssl
import threading
import time
import uuid
from collections import Counter
from contextlib import nullcontext

import pytest
from cassandra import ConsistencyLevel, OperationTimedOut
from cassandra.cluster import EXEC_PROFILE_DEFAULT, NoHostAvailable
from cassandra.connection import Connection, ConnectionException
from cassandra.io.libevreactor import LibevConnection
from cassandra.policies import ConstantReconnectionPolicy, ConstantSpeculativeExecutionPolicy, RetryPolicy
from cassandra.policies import RoundRobinPolicy
from cassandra.query import SimpleStatement, named_tuple_factory

import pyfactories
from profiling.cluster import Contact, connect
from profiling.cluster import profile as cluster_profile
from pyfactories import connection
from pyfactories import decoding

from .proxy import HoldingProxy, self_signed_tls_proxy
from .support import pool_connections

pytestmark = pytest.mark.integration

KEYSPACE = "behaviours"  # this module's own keyspace
PARTITION_ROWS = 10
FETCH = 3
CLASSES = {"driver": LibevConnection, "ours": connection.TimerQueueLibevConnection}
DRIVER_ERRORS = (ConnectionException, OperationTimedOut, NoHostAvailable)
SETTLE_S = 15.0  # the most any wait here may take (nothing may hang)
SELECT_ONE = "SELECT release_version FROM system.local"


def _open(contact, name, protocol=5, **options):
    """(cluster, session) of connection class ``name``; the fast path on for ours."""
    cluster, session = connect(contact, connection_class=CLASSES[name], protocol_version=protocol,
                               row_factory=named_tuple_factory, **options)
    if name == "ours":
        assert decoding.enable(session, rows="named"), decoding.UNAVAILABLE_REASON
    return cluster, session


@pytest.fixture(scope="module")
def pairs(contact):
    """``pairs(protocol)`` -> {"driver": session, "ours": session}, straight to the node, the
    keyspace and its multi-page partition in place."""
    opened, clusters = {}, []

    def get(protocol=5):
        if protocol not in opened:
            opened[protocol] = {}
            for name in CLASSES:
                cluster, opened[protocol][name] = _open(contact, name, protocol)
                clusters.append(cluster)
            if len(opened) == 1:
                _create(opened[protocol]["driver"])
        return opened[protocol]

    yield get
    for cluster in clusters:
        cluster.shutdown()


def _create(session):
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}", timeout=60)
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.pages (k int, c int, v text, PRIMARY KEY (k, c))",
                    timeout=60)
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.lwt (k text PRIMARY KEY, v int)", timeout=60)
    insert = session.prepare(f"INSERT INTO {KEYSPACE}.pages (k, c, v) VALUES (1, ?, ?)")
    for c in range(PARTITION_ROWS):
        session.execute(insert, (c, f"row {c}"))


@pytest.fixture
def proxy(contact):
    """A proxy of its own for each test (dropping its connections touches no other test's)."""
    p = HoldingProxy(contact.hosts[0], contact.port)
    yield p
    p.close()


def _through(proxy, name, **options):
    """(cluster, session) through ``proxy``. Connecting may wait longer than the driver's 2 s: the
    proxy's threads share a loaded machine, and no test here holds replies while connecting."""
    options.setdefault("reconnection_policy", ConstantReconnectionPolicy(0.2, None))
    options.setdefault("control_connection_timeout", 10.0)
    options.setdefault("connect_timeout", 10.0)
    return _open(Contact(["127.0.0.1"], proxy.port), name, **options)


def _settle(futures, within=SETTLE_S):
    """Each future's outcome (its rows as a list, or its exception), waiting at most ``within`` s
    for all of them; a future still pending fails the test."""
    done = threading.Semaphore(0)
    outcomes: dict[int, object] = {}

    def keep(i, value):
        outcomes[i] = value
        done.release()

    for i, f in enumerate(futures):
        f.add_callbacks(lambda rs, i=i: keep(i, list(rs)), lambda exc, i=i: keep(i, exc))
    deadline = time.monotonic() + within
    for _ in futures:
        assert done.acquire(timeout=max(deadline - time.monotonic(), 0)), (
            f"{len(futures) - len(outcomes)} of {len(futures)} requests still pending after {within} s")
    return [outcomes[i] for i in range(len(futures))]


def _kinds(outcomes):
    return Counter("rows" if isinstance(o, list) else type(o).__name__ for o in outcomes)


def _works_again(session, within=SETTLE_S):
    deadline = time.monotonic() + within
    while True:
        try:
            return session.execute(SELECT_ONE, timeout=2).one()
        except DRIVER_ERRORS:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


# 1. Paging -------------------------------------------------------------------------------------

@pytest.mark.parametrize("protocol", [5, 4], ids=["v5", "v4"])
@pytest.mark.parametrize("prepared", [False, True], ids=["simple", "prepared"])
def test_paging_automatic_and_manual(pairs, protocol, prepared):
    query = f"SELECT k, c, v FROM {KEYSPACE}.pages WHERE k = 1"
    got = {}
    for name, session in pairs(protocol).items():
        statement = session.prepare(query) if prepared else SimpleStatement(query)
        statement.fetch_size = FETCH
        automatic = list(session.execute(statement))
        pages, state = [], None
        while True:
            rs = session.execute(statement, paging_state=state)
            pages.append([tuple(r) for r in rs.current_rows])
            state = rs.paging_state
            if not rs.has_more_pages:
                break
        got[name] = ([tuple(r) for r in automatic], pages, type(automatic[0]).__name__)
    assert got["ours"] == got["driver"]
    automatic, pages, _ = got["ours"]
    assert automatic == [(1, c, f"row {c}") for c in range(PARTITION_ROWS)]
    assert [len(p) for p in pages] == [FETCH] * (PARTITION_ROWS // FETCH) + [PARTITION_ROWS % FETCH]
    assert sum(pages, []) == automatic


# 2. Tracing ------------------------------------------------------------------------------------

def test_tracing(pairs):
    for name, session in pairs().items():
        rs = session.execute(f"SELECT c FROM {KEYSPACE}.pages WHERE k = 1 AND c = 2", trace=True)
        assert rs.one().c == 2
        trace = rs.get_query_trace(max_wait_sec=10)
        assert trace.trace_id == rs.response_future.get_query_trace_ids()[0]
        assert trace.events, name
        assert trace.duration is not None and trace.coordinator
        assert "Execute CQL3 query" in trace.request_type, (name, trace.request_type)


# 3. Lightweight transactions -------------------------------------------------------------------

def test_lwt_was_applied(pairs):
    for name, session in pairs().items():
        key = f"{name}-{uuid.uuid4().hex}"
        insert = f"INSERT INTO {KEYSPACE}.lwt (k, v) VALUES (%s, %s) IF NOT EXISTS"
        first = session.execute(insert, (key, 1))
        assert first.was_applied is True and pyfactories.was_applied(first) is True, name
        second = session.execute(insert, (key, 2))
        assert second.was_applied is False and pyfactories.was_applied(second) is False, name
        assert second.one().v == 1 and second.one().k == key
        assert session.execute(f"SELECT v FROM {KEYSPACE}.lwt WHERE k = %s", (key,)).one().v == 1


# 4. Speculative executions and retries ---------------------------------------------------------

class EachHostTwice(RoundRobinPolicy):
    """A query plan naming every host twice: on one node a speculative execution is a second
    request on the same host (the driver's ``_on_speculative_execute`` takes the plan's next host)."""

    def make_query_plan(self, working_keyspace=None, query=None):
        for host in super().make_query_plan(working_keyspace, query):
            yield host
            yield host


def test_speculative_execution_same_as_the_driver(proxy):
    """An idempotent request held by the server past the speculative delay goes out a second time
    (our timer fires the driver's ``_on_speculative_execute``); once released, the future has the
    rows, and both answers reach its callbacks, as the driver's own connection does it (the
    driver's ``_set_result`` has no guard against a second answer)."""
    seen = {}
    for name in sorted(CLASSES):
        spec = cluster_profile(load_balancing_policy=EachHostTwice(), request_timeout=10,
                               row_factory=named_tuple_factory,
                               speculative_execution_policy=ConstantSpeculativeExecutionPolicy(0.05, 2))
        cluster, session = _through(proxy, name, profiles={"spec": spec})
        try:
            statement = session.prepare(f"SELECT c, v FROM {KEYSPACE}.pages WHERE k = 1 AND c = ?")
            statement.is_idempotent = True
            expected = list(session.execute(statement, (4,), execution_profile="spec"))
            calls = []
            proxy.hold.set()
            future = session.execute_async(statement, (4,), execution_profile="spec")
            future.add_callbacks(calls.append, calls.append)
            deadline = time.monotonic() + 5
            while len(future.attempted_hosts) < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert not future._event.is_set()
            assert len(future.attempted_hosts) == 2  # the speculative execution went out
            proxy.hold.clear()
            assert [list(o) for o in _settle([future])] == [expected]
            assert list(future.result()) == expected
            conn = pool_connections(session)[0]
            deadline = time.monotonic() + 5
            # the second answer arrives too: the connection is given back before the future's
            # callbacks run (in the driver's ``_set_result``), so both are waited for
            while (conn.in_flight or len(calls) < len(future.attempted_hosts)) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert conn.in_flight == 0 and not conn.is_defunct
            assert all(list(c) == expected for c in calls)
            seen[name] = len(calls)
        finally:
            proxy.hold.clear()
            cluster.shutdown()
    assert seen["ours"] == seen["driver"] == 2, seen


class CountingRetry(RetryPolicy):
    """Retries a request once on the same host after a connection error; counts what it was asked."""

    def __init__(self):
        self.asked = Counter()

    def on_request_error(self, query, consistency, error, retry_num):
        self.asked[(type(error).__name__, retry_num)] += 1
        return (self.RETRY, consistency) if retry_num == 0 else (self.RETHROW, None)


def _drop_under_load(proxy, session, statement, n, refuse_for, profile=EXEC_PROFILE_DEFAULT):
    """``n`` requests held by the proxy, then every connection dropped: their outcomes."""
    session.execute(statement, execution_profile=profile)
    proxy.hold.set()
    futures = [session.execute_async(statement, execution_profile=profile) for _ in range(n)]
    time.sleep(0.2)
    assert not any(f._event.is_set() for f in futures)
    proxy.drop(refuse_for)
    return _settle(futures)


def test_retry_policy_on_a_dropped_connection_same_as_the_driver(proxy):
    """Requests in flight when the connection drops: the driver's ``on_request_error`` is asked the
    same, once per request, and the requests end the same, on ours as on the driver's. A request
    that times out on the client (our timer) asks no policy, as with the driver's timers."""
    seen = {}
    for name in sorted(CLASSES):
        policy = CountingRetry()
        profile = cluster_profile(retry_policy=policy, request_timeout=5, row_factory=named_tuple_factory)
        cluster, session = _through(proxy, name, profiles={"retrying": profile})
        try:
            statement = SimpleStatement(SELECT_ONE, is_idempotent=True, consistency_level=ConsistencyLevel.ONE)
            proxy.hold.set()
            with pytest.raises(OperationTimedOut):
                session.execute(statement, execution_profile="retrying", timeout=0.3)
            proxy.hold.clear()
            assert not policy.asked  # a client-side timeout is final in the driver: no policy is asked
            outcomes = _drop_under_load(proxy, session, statement, 20, 0.0, "retrying")
            assert all(isinstance(o, list) or isinstance(o, DRIVER_ERRORS) for o in outcomes), _kinds(outcomes)
            seen[name] = (dict(policy.asked), _kinds(outcomes))
            assert _works_again(session)
        finally:
            cluster.shutdown()
    assert seen["ours"][0] == seen["driver"][0]
    assert seen["ours"][0][("ConnectionShutdown", 0)] == 20
    assert set(seen["ours"][1]) == set(seen["driver"][1])


# 5. Schema changes -----------------------------------------------------------------------------

def test_schema_changes_seen_by_metadata(pairs, contact):
    driver = pairs()["driver"]
    cluster, session = _open(contact, "ours", schema_event_refresh_window=0.05)
    try:
        control = cluster.control_connection._connection
        assert type(control) is connection.TimerQueueLibevConnection
        # registered for the node's pushed events (a topology or status change cannot be made here:
        # the node is shared; the schema change below comes the same way, stream -1, through our loop)
        assert {"TOPOLOGY_CHANGE", "STATUS_CHANGE", "SCHEMA_CHANGE"} <= set(control._push_watchers)
        table = f"t_{uuid.uuid4().hex[:12]}"
        rs = session.execute(f"CREATE TABLE {KEYSPACE}.{table} (k int PRIMARY KEY, v text)", timeout=60)
        assert rs.response_future.is_schema_agreed
        assert set(cluster.metadata.keyspaces[KEYSPACE].tables[table].columns) == {"k", "v"}
        session.execute(f"ALTER TABLE {KEYSPACE}.{table} ADD extra int", timeout=60)
        assert "extra" in cluster.metadata.keyspaces[KEYSPACE].tables[table].columns
        # scylla-driver has Session.wait_for_schema_agreement (and deprecates the control connection's)
        agreed = getattr(session, "wait_for_schema_agreement", cluster.control_connection.wait_for_schema_agreement)
        assert agreed()
        # A change made by another client reaches ours as a pushed SCHEMA_CHANGE event on our control connection.
        driver.execute(f"ALTER TABLE {KEYSPACE}.{table} ADD pushed text", timeout=60)
        deadline = time.monotonic() + SETTLE_S
        while "pushed" not in cluster.metadata.keyspaces[KEYSPACE].tables[table].columns:
            assert time.monotonic() < deadline, "the schema event never reached our control connection"
            time.sleep(0.05)
        session.execute(f"INSERT INTO {KEYSPACE}.{table} (k, v, extra, pushed) VALUES (1, 'a', 2, 'b')")
        assert tuple(session.execute(f"SELECT k, v, extra, pushed FROM {KEYSPACE}.{table}").one()) == (1, "a", 2, "b")
        session.execute(f"DROP TABLE {KEYSPACE}.{table}", timeout=60)
        assert table not in cluster.metadata.keyspaces[KEYSPACE].tables
    finally:
        cluster.shutdown()


# 6. Heartbeats ---------------------------------------------------------------------------------

SUPPORTED = 0x06  # the opcode of the answer to a heartbeat's OPTIONS
EVENT = 0x0C  # a server event (a schema change by another client of the node, ...)


def _counting(base):
    class Counting(base):
        supported, events = Counter(), Counter()

        def process_msg(self, header, body):
            if header.opcode == SUPPORTED:
                Counting.supported[id(self)] += 1
            elif header.opcode == EVENT:
                Counting.events[id(self)] += 1
            return super().process_msg(header, body)

    return Counting


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_heartbeats_go_through_the_read_loop(contact, name):
    cls = _counting(CLASSES[name])
    cluster, session = connect(contact, connection_class=cls, protocol_version=5, idle_heartbeat_interval=1)
    try:
        session.execute(SELECT_ONE)
        conns = [cluster.control_connection._connection] + pool_connections(session)
        assert len(conns) >= 2  # the control connection and the pool's
        before = {id(c): cls.supported[id(c)] for c in conns}  # one each from the handshake
        events_before = cls.events[id(conns[0])]
        deadline = time.monotonic() + SETTLE_S
        while True:  # idle: the heartbeat thread sends OPTIONS each second, the SUPPORTED answers come back
            beats = {id(c): cls.supported[id(c)] - before[id(c)] for c in conns}
            # the control connection is not idle while it gets events (other clients of the node changing
            # its schema): the driver sends it no heartbeat then; the pool's connections get none
            control_busy = cls.events[id(conns[0])] > events_before
            if all(beats[id(c)] >= 2 for c in conns if not (c is conns[0] and control_busy)):
                break
            assert time.monotonic() < deadline, (beats, control_busy)
            time.sleep(0.1)
        assert not any(c.is_defunct for c in conns)
        assert session.execute(SELECT_ONE).one()
    finally:
        cluster.shutdown()


# 7. The node going away ------------------------------------------------------------------------

def _threads():
    return {t.ident: t for t in threading.enumerate()}


def _foreign(thread, cluster):
    """A worker of some other cluster's executor. The other clusters of this process (the module's
    ``pairs``, kept open for its tests) start their executors' workers lazily, when they next have work
    (a schema change another test's DDL made, pushed to every control connection), so one may start
    at any time."""
    prefix = cluster.executor._thread_name_prefix
    return thread.name.startswith("ThreadPoolExecutor-") and not thread.name.startswith(prefix + "_")


def _threads_left(before, cluster, within=3.0):
    """Names of the threads started since ``before`` (the proxy's and other clusters' executors'
    aside) still running ``within`` s on."""
    deadline = time.monotonic() + within
    new = [t for i, t in _threads().items()
           if i not in before and t.name != "holding-proxy" and not _foreign(t, cluster)]
    for t in new:
        t.join(max(deadline - time.monotonic(), 0))
    return sorted(t.name for t in new if t.is_alive())


def test_node_goes_away_and_comes_back_same_as_the_driver(proxy):
    """50 requests in flight when the proxy closes every connection and its port for 2 s: they end
    at once with the driver's errors, the session reconnects (0.2 s reconnection policy) and
    answers again; after shutdown no thread is left that the driver's class does not leave."""
    seen, left = {}, {}
    for name in sorted(CLASSES):
        before = _threads()
        cluster, session = _through(proxy, name)
        try:
            outcomes = _drop_under_load(proxy, session, SELECT_ONE, 50, 2.0)
            assert all(isinstance(o, DRIVER_ERRORS) for o in outcomes), _kinds(outcomes)
            seen[name] = set(_kinds(outcomes))
            assert _works_again(session)
            assert proxy.refusing.is_set() is False
        finally:
            cluster.shutdown()
        left[name] = _threads_left(before, cluster)
    assert seen["ours"] == seen["driver"]
    assert set(left["ours"]) <= set(left["driver"]), left


# 8. Shutdown with requests in flight -----------------------------------------------------------

def test_shutdown_with_requests_in_flight(proxy):
    """``cluster.shutdown()`` with 500 requests held by the server returns at once; the requests,
    whose retries the shut-down session no longer runs, end when their timers fire (our timers
    keep firing after the shutdown), with the driver's error, as on the driver's connection."""
    seen = {}
    # a request timeout well past the time 500 requests and the shutdown take on a busy machine: a timer
    # that fired before the shutdown reached its request would end it with OperationTimedOut instead
    timeout = 3
    for name in sorted(CLASSES):
        cluster, session = _through(proxy, name, request_timeout=timeout)
        try:
            session.execute(SELECT_ONE)
            proxy.hold.set()
            futures = [session.execute_async(SELECT_ONE) for _ in range(500)]
            t0 = time.monotonic()
            cluster.shutdown()
            took = time.monotonic() - t0
            outcomes = _settle(futures, within=timeout + 5)
        finally:
            proxy.hold.clear()
            cluster.shutdown()
        assert took < 5, (name, took)
        assert all(isinstance(o, (list, *DRIVER_ERRORS)) for o in outcomes), _kinds(outcomes)
        seen[name] = set(_kinds(outcomes))
    assert seen["ours"] == seen["driver"]


# 9. TLS ----------------------------------------------------------------------------------------

def test_tls_is_the_drivers():
    """Ours changes nothing of how a socket is opened: the driver's ``Connection`` wraps it in TLS
    (``ssl_context``, or one built from ``ssl_options``). Reads and writes go through that socket: the
    driver's ``handle_read``/``handle_write`` around our coalesced writes (``pyfactories.connection._writes_py``, whose
    TLS retries ``tests/connection/test_writes.py`` checks), end to end in the tests below."""
    ours = connection.TimerQueueLibevConnection
    for attr in ("__init__", "_connect_socket", "_wrap_socket_from_context", "_build_ssl_context_from_options"):
        assert getattr(ours, attr) is getattr(LibevConnection, attr), attr
    assert ours.handle_read is not LibevConnection.handle_read  # ours: coalesced writes after each read
    assert LibevConnection._connect_socket is Connection._connect_socket


@pytest.mark.parametrize("tls", ["ssl_context", "ssl_options"])
def test_tls_to_a_node_without_tls_fails_as_the_drivers(contact, tls):
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    options = {"ssl_context": context} if tls == "ssl_context" else {"ssl_options": {"cert_reqs": ssl.CERT_NONE}}
    errors = {}
    for name in sorted(CLASSES):
        deprecated = pytest.warns(DeprecationWarning, match="ssl_options") if tls == "ssl_options" else nullcontext()
        with deprecated, pytest.raises(NoHostAvailable) as info:
            connect(contact, connection_class=CLASSES[name], protocol_version=5, connect_timeout=3, **options)
        errors[name] = {type(e).__name__ for e in info.value.errors.values()}
    assert errors["ours"] == errors["driver"]


@pytest.fixture(scope="module")
def tls_proxy(contact, tmp_path_factory):
    """A TLS proxy to the node with a self-signed certificate for 127.0.0.1, and a client context
    that verifies it (certificate and host name)."""
    p, context = self_signed_tls_proxy(contact.hosts[0], contact.port, tmp_path_factory.mktemp("tls"))
    yield p, context
    p.close()


@pytest.mark.parametrize("protocol", [5, 4], ids=["v5", "v4"])
def test_tls_end_to_end_same_rows(pairs, tls_proxy, protocol):
    """Through TLS, ours reads the decrypted bytes with its own loop: the same rows and pages as the
    driver's class straight to the node, many requests in flight."""
    proxy, context = tls_proxy
    reference = pairs(protocol)["driver"]
    handshakes = proxy.handshakes
    cluster, session = _open(Contact(["127.0.0.1"], proxy.port), "ours", protocol, ssl_context=context)
    try:
        conns = [cluster.control_connection._connection] + pool_connections(session)
        assert all(isinstance(c._socket, ssl.SSLSocket) for c in conns)
        assert proxy.handshakes - handshakes == len(conns)
        query = SimpleStatement(f"SELECT k, c, v FROM {KEYSPACE}.pages WHERE k = 1", fetch_size=FETCH)
        assert [tuple(r) for r in session.execute(query)] == [tuple(r) for r in reference.execute(query)]
        select = session.prepare(f"SELECT c, v FROM {KEYSPACE}.pages WHERE k = 1 AND c = ?")
        outcomes = _settle([session.execute_async(select, (i % PARTITION_ROWS,)) for i in range(300)])
        assert [[tuple(r) for r in o] for o in outcomes] == [[(i % PARTITION_ROWS, f"row {i % PARTITION_ROWS}")]
                                                              for i in range(300)]
        # a page of many TLS records, of keyspaces no test changes (other tests create tables meanwhile)
        big = ("SELECT * FROM system_schema.columns WHERE keyspace_name IN "
               "('system', 'system_schema', 'system_auth', 'system_distributed', 'system_traces')")
        rows = [tuple(r) for r in session.execute(big)]
        assert len(rows) > 200 and rows == [tuple(r) for r in reference.execute(big)]
    finally:
        cluster.shutdown()
