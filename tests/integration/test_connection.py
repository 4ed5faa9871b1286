"""Request timers of ``pyfactories.connection`` through a real server: the same rows as the driver's
connection, and the driver's timeouts (``OperationTimedOut`` with its message, at the time it fires
them, per call and per execution profile, none with ``timeout=None``) through a proxy that can hold
the server's answers back, next to the driver's own connection class through the same proxy.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import pytest
from pathlib import Path
from cassandra import OperationTimedOut
from cassandra.io.asyncioreactor import AsyncioConnection
from cassandra.io.libevreactor import LibevConnection
from cassandra.query import SimpleStatement, named_tuple_factory

from profiling.cluster import Contact, open_cluster
from profiling.cluster import profile as cluster_profile
from pyfactories import connection
from pyfactories import decoding

from .proxy import HoldingProxy
from .support import METHODS, Target, assert_same_fetch, fetch

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
KS_TIMERS = "timers"  # this module's own keyspace
SLOW = "SELECT * FROM system_schema.columns"
LATE_S = 1.5  # how late a timeout may fire on a busy shared 2-CPU machine (the driver's and ours alike); the default is 10 s


@pytest.fixture(scope="module")
def proxy(contact):
    p = HoldingProxy(contact.hosts[0], contact.port)
    yield p
    p.close()


CLASSES = {"driver": LibevConnection, "ours": connection.TimerQueueLibevConnection}


@pytest.fixture(scope="module", params=sorted(CLASSES))
def held(request, proxy):
    """(session through the proxy, its connection class's name), with a 0.3 s execution profile "short"."""
    cluster = open_cluster(Contact(["127.0.0.1"], proxy.port), connection_class=CLASSES[request.param],
                           profiles={"short": cluster_profile(request_timeout=0.3)}, protocol_version=5)
    yield cluster.connect(), request.param
    cluster.shutdown()


@pytest.fixture(scope="module")
def sessions(clusters):
    """{"driver": session, "ours": session} straight to the node, the default profile's row factory dicts."""
    out = {}
    for name, cls in CLASSES.items():
        cluster = clusters.cluster(row_factory=named_tuple_factory, connection_class=cls)
        out[name] = cluster.connect()
    return out


def _timed(fn):
    t0 = time.perf_counter()
    with pytest.raises(OperationTimedOut) as info:
        fn()
    return info.value, time.perf_counter() - t0


def test_cluster_options_is_ours(clusters):
    cluster = clusters.cluster(**connection.cluster_options())
    assert cluster.connection_class is connection.TimerQueueLibevConnection
    assert cluster.connect().execute("SELECT release_version FROM system.local").one()


@pytest.mark.parametrize("method", METHODS)
def test_same_rows_as_the_driver(sessions, method):
    assert_same_fetch(fetch(Target(sessions["ours"]), method), fetch(Target(sessions["driver"]), method))


def test_same_rows_with_the_fast_path_on_top(sessions, clusters):
    if not decoding.AVAILABLE:
        pytest.fail(f"the fast path is off in this build: {decoding.UNAVAILABLE_REASON}")
    cluster = clusters.cluster(**connection.cluster_options())
    session = cluster.connect()
    assert decoding.enable(session, rows="named")
    for method in METHODS:
        assert_same_fetch(fetch(Target(session), method), fetch(Target(sessions["driver"]), method))


#: What the driver's ``ResponseFuture._on_timeout`` names the error when the request is no longer (or not
#: yet) among its connection's requests: with a timeout this short, the timer can fire on the event loop
#: before the thread sending the request has registered it, on the driver's own connection too.
RACED_TIMER = "Connection defunct by heartbeat"


def _timed_out(session, query, timeout, attempts=20):
    """The client timeout ``session.execute(query, timeout=timeout)`` raises: on a loaded machine the
    timer can fire after the answer came (the request then succeeds, as with the driver's own
    timers), or before the request was registered (:data:`RACED_TIMER`), so it is tried again, up to
    ``attempts`` times."""
    for _ in range(attempts - 1):
        try:
            session.execute(query, timeout=timeout)
        except OperationTimedOut as exc:
            if RACED_TIMER not in str(exc):
                return exc
    return _timed(lambda: session.execute(query, timeout=timeout))[0]


_IN_FLIGHT = re.compile(r"in_flight=\d+")
_IN_FLIGHT_COUNT = re.compile(r"in_flight=(\d+)")


def test_a_tiny_timeout_raises_the_drivers_error(sessions):
    """1e-4 s is shorter than any answer from the node: the request times out on the client."""
    errors = {name: _timed_out(session, SLOW, 1e-4) for name, session in sessions.items()}
    # where the driver's message counts the connection's requests in flight (scylla-driver's), that count is
    # timing's (an earlier request timed out and not answered yet, a heartbeat): never fewer than this one
    in_flight = {name: [int(n) for n in _IN_FLIGHT_COUNT.findall(str(error))] for name, error in errors.items()}
    assert len(in_flight["ours"]) == len(in_flight["driver"]) and min(sum(in_flight.values(), []), default=1) >= 1
    assert _IN_FLIGHT.sub("in_flight=n", str(errors["ours"])) == _IN_FLIGHT.sub("in_flight=n", str(errors["driver"]))
    assert "Client request timeout. See Session.execute[_async](timeout)" in str(errors["ours"])
    assert errors["ours"].last_host == errors["driver"].last_host
    for session in sessions.values():  # and the connection keeps working
        assert session.execute("SELECT release_version FROM system.local").one()


def test_a_server_that_stops_answering_times_out_on_time(held, proxy):
    session, name = held
    session.execute("SELECT release_version FROM system.local")
    proxy.hold.set()
    try:
        exc, took = _timed(lambda: session.execute("SELECT release_version FROM system.local", timeout=0.4))
        exc_p, took_p = _timed(lambda: session.execute("SELECT release_version FROM system.local",
                                                        execution_profile="short"))
        future = session.execute_async("SELECT release_version FROM system.local", timeout=0.2)
        exc_f, took_f = _timed(future.result)  # ResponseFuture.result() waits for the timer
    finally:
        proxy.hold.clear()
    assert 0.4 - 0.01 <= took <= 0.4 + LATE_S, (name, took)
    assert 0.3 - 0.01 <= took_p <= 0.3 + LATE_S, (name, took_p)
    assert took_f <= 0.2 + LATE_S, (name, took_f)
    for e in (exc, exc_p, exc_f):
        assert "Client request timeout. See Session.execute[_async](timeout)" in str(e)
    assert session.execute("SELECT release_version FROM system.local").one()


def test_lean_requests_put_their_timers_on_our_service_or_the_subclass_create_timer(proxy):
    """Everything on (lean futures on our connection): a request's timer goes to the loop's timer service,
    is cancelled by the answer, and times out on time with the driver's error; a subclass of our class that
    replaces ``create_timer`` gets it called."""
    import pyfactories
    from pyfactories import futures

    made = []

    class Counting(connection.TimerQueueLibevConnection):
        @classmethod
        def create_timer(cls, timeout, callback):
            made.append(timeout)
            return super().create_timer(timeout, callback)

    for cls in (connection.TimerQueueLibevConnection, Counting):
        cluster = open_cluster(Contact(["127.0.0.1"], proxy.port), connection_class=cls, protocol_version=5)
        try:
            assert pyfactories.enable(cluster)["futures"].on
            session = cluster.connect()
            assert futures.is_installed(session) and session.cluster.connection_class is cls
            session.execute("SELECT release_version FROM system.local")
            before, service = len(made), connection.libev_timers().service
            proxy.hold.set()
            try:
                live = service.live
                future = session.execute_async("SELECT release_version FROM system.local", timeout=5.0)
                assert future._timer.pending and service.live == live + 1  # on the loop's service
            finally:
                proxy.hold.clear()
            assert future.result().one() and not future._timer.pending and service.live == live
            assert len(made) == before + (cls is Counting)
            proxy.hold.set()
            try:
                exc, took = _timed(lambda: session.execute("SELECT release_version FROM system.local", timeout=0.3))
            finally:
                proxy.hold.clear()
            assert 0.3 - 0.01 <= took <= 0.3 + LATE_S and isinstance(exc, OperationTimedOut), (cls, took, exc)
            assert session.execute("SELECT release_version FROM system.local").one()
        finally:
            cluster.shutdown()


def test_timeout_none_waits_and_creates_no_timer(held, proxy):
    session, name = held
    service = connection.libev_timers().service
    session.execute("SELECT release_version FROM system.local")
    live = service.live
    proxy.hold.set()
    try:
        future = session.execute_async("SELECT release_version FROM system.local", timeout=None)
        time.sleep(0.6)
        assert not future._event.is_set()  # still waiting: no timeout
        assert service.live == live  # and no timer of ours
    finally:
        proxy.hold.clear()
    assert future.result().one()


def test_many_in_flight_all_answered_and_no_timer_left(sessions):
    session = sessions["ours"]
    service = connection.libev_timers().service
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KS_TIMERS} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute(f"CREATE TABLE IF NOT EXISTS {KS_TIMERS}.kv (k int PRIMARY KEY, v text)")
    insert = session.prepare(f"INSERT INTO {KS_TIMERS}.kv (k, v) VALUES (?, ?)")
    futures = [session.execute_async(insert, (i, f"v{i}")) for i in range(2_000)]
    for f in futures:
        f.result()
    assert service.live == 0 and service.queued() == 0
    rows = session.execute(SimpleStatement(f"SELECT k, v FROM {KS_TIMERS}.kv", fetch_size=500))
    got = {r.k: r.v for r in rows}
    assert all(got[i] == f"v{i}" for i in range(2_000))


SHUTDOWN_SCRIPT = """
import json, sys, threading
from cassandra.io.libevreactor import LibevConnection
from profiling.cluster import Contact, open_cluster
from pyfactories import connection
cls = {"driver": LibevConnection, "ours": connection.TimerQueueLibevConnection}[sys.argv[1]]
before = {t.ident for t in threading.enumerate()}
cluster = open_cluster(Contact([sys.argv[2]], int(sys.argv[3])), connection_class=cls, protocol_version=5)
session = cluster.connect()
for f in [session.execute_async("SELECT release_version FROM system.local") for _ in range(100)]:
    f.result()
during = sorted(t.name for t in threading.enumerate() if t.ident not in before)
cluster.shutdown()
for t in threading.enumerate():
    if t.ident not in before:
        t.join(5)
print(json.dumps([during, sorted(t.name for t in threading.enumerate() if t.ident not in before)]))
"""


def _threads_left(contact, name: str) -> tuple[list[str], list[str]]:
    """(threads a cluster of ``name``'s connection class started, those left after its shutdown),
    in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", SHUTDOWN_SCRIPT, name, contact.hosts[0], str(contact.port)],
                         capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return tuple(json.loads(out.stdout))


def test_shutdown_leaves_no_thread(contact):
    """Ours: nothing left, the event loop thread ends once its connections are gone. The driver's
    own class leaves its event loop thread up (its libev timer, once started, repeats and keeps the
    loop running until the interpreter exits): shown here so a change in the driver is noticed."""
    during, after = _threads_left(contact, "ours")
    assert "event_loop" in during and "Connection heartbeat" in during
    assert after == []
    during, after = _threads_left(contact, "driver")
    assert "event_loop" in during
    assert after == ["event_loop"]


def test_asyncio_connection_times_out_and_answers(proxy):
    """Through the proxy holding the answers back, so the timeout cannot race the server's answer."""
    options = connection.cluster_options(AsyncioConnection)
    cluster = open_cluster(Contact(["127.0.0.1"], proxy.port), protocol_version=5, **options)
    try:
        session = cluster.connect()
        assert session.execute("SELECT release_version FROM system.local").one()
        proxy.hold.set()
        try:
            exc, took = _timed(lambda: session.execute("SELECT release_version FROM system.local", timeout=0.2))
        finally:
            proxy.hold.clear()
        assert "Client request timeout" in str(exc)
        assert 0.2 - 0.01 <= took <= 0.2 + LATE_S, took
        futures = [session.execute_async("SELECT release_version FROM system.local") for _ in range(200)]
        assert all(f.result().one() for f in futures)
        service = connection.TimerQueueAsyncioConnection._timers().service
        assert service.live == 0
    finally:
        cluster.shutdown()


FORK_SCRIPT = """
import os, sys
from cassandra import OperationTimedOut
from cassandra.io import libevreactor
from profiling.cluster import Contact, open_cluster
from pyfactories import connection
contact = Contact([sys.argv[1]], int(sys.argv[2]))
parent = open_cluster(contact, protocol_version=5, **connection.cluster_options())
session = parent.connect()
session.execute("SELECT release_version FROM system.local")
before = connection.libev_timers()
pid = os.fork()
if pid == 0:
    code = 10
    try:
        child = open_cluster(contact, protocol_version=5, **connection.cluster_options())
        cs = child.connect()
        code = 11 if cs.execute("SELECT release_version FROM system.local").one() is None else 12
        # 50 at once: a timer fires up to one 10 ms bucket late, and one request alone (sent by its
        # caller at once) can be answered sooner than that
        for f in [cs.execute_async("SELECT * FROM system_schema.columns", timeout=1e-4) for _ in range(50)]:
            try:
                f.result()
            except OperationTimedOut:
                code = 13
        timers = connection.libev_timers()
        if code == 13 and timers is not before and timers.loop is libevreactor._global_loop and before.loop._shutdown:
            code = 0
        child.shutdown()
    finally:
        os._exit(code)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status), session.execute("SELECT release_version FROM system.local").one() is not None)
parent.shutdown()
"""


def test_a_forked_child_gets_a_new_loop_and_timers_of_its_own(contact):
    """The driver's fork handling (``initialize_reactor`` sees a new PID, ``handle_fork`` cleans the
    parent's loop up) is kept: the child's cluster works, times out, on a new loop with new timers;
    the parent's session goes on."""
    out = subprocess.run([sys.executable, "-c", FORK_SCRIPT, contact.hosts[0], str(contact.port)],
                         capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "True"], out.stdout + out.stderr
