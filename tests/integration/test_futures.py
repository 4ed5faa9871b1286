"""``pyfactories.futures`` through a real server: the futures and messages it builds equal those of the
driver's ``Session._create_response_future`` for every kind of request (the ones it leaves to the
driver included), and requests on a session with it give the rows, errors, pages, traces, timeouts
and LWT answers of a session without it; nothing is kept alive after a long run."""

from __future__ import annotations

import gc
import threading
import time
import weakref

import pytest
from cassandra import ConsistencyLevel, InvalidRequest, OperationTimedOut
from cassandra.cluster import EXEC_PROFILE_DEFAULT, ResponseFuture, ResultSet, Session
from cassandra import concurrent
from cassandra.concurrent import execute_concurrent, execute_concurrent_with_args
from cassandra.policies import ConstantSpeculativeExecutionPolicy, FallthroughRetryPolicy
from cassandra.query import BatchStatement, SimpleStatement, named_tuple_factory, tuple_factory

from profiling.cluster import connect
from profiling.cluster import profile as cluster_profile
import pyfactories
from pyfactories import aio, futures
from pyfactories.futures import _futures_py
from .support import refresh_schema

pytestmark = pytest.mark.integration

KEYSPACE = "futures"  # this module's own keyspace
ROWS = 25
SETTLE_S = 15.0


@pytest.fixture(scope="module")
def sessions(contact):
    """``(ours, the driver's)``: the fast path on, with and without our futures; two profiles each."""
    clusters, found = [], []
    try:
        for lean in (True, False):
            profiles = {
                EXEC_PROFILE_DEFAULT: cluster_profile(row_factory=named_tuple_factory),
                "other": cluster_profile(row_factory=tuple_factory, consistency_level=ConsistencyLevel.ALL,
                                         serial_consistency_level=ConsistencyLevel.LOCAL_SERIAL, request_timeout=7.5,
                                         speculative_execution_policy=ConstantSpeculativeExecutionPolicy(5.0, 1)),
            }
            cluster, session = connect(contact, protocol_version=5, profiles=profiles)
            clusters.append(cluster)
            assert pyfactories.enable(session, futures=lean, connection=False)["rows"].on
            assert futures.is_installed(session) is lean
            found.append(session)
        ours = found[0]
        ours.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                     "{'class': 'SimpleStrategy', 'replication_factor': 1}", timeout=60)
        ours.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.kv (k int, c int, v text, PRIMARY KEY (k, c))", timeout=60)
        ours.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.lwt (k text PRIMARY KEY, v int)", timeout=60)
        insert = ours.prepare(f"INSERT INTO {KEYSPACE}.kv (k, c, v) VALUES (?, ?, ?)")
        execute_concurrent_with_args(ours, insert, [(1, c, f"row {c}") for c in range(ROWS)])
        for session in found:
            refresh_schema(session.cluster)
        yield tuple(found)
    finally:
        for cluster in clusters:
            cluster.shutdown()


VOLATILE = {"_event", "_callback_lock", "_start_time", "query_plan", "_timer", "session", "_load_balancer",
            "_spec_execution_plan"}  # the driver's sets the class default in the instance: compared by type


#: the attributes a lean future keeps out of its ``__dict__``: on the driver's futures, in their ``vars``
FIELDS = set(_futures_py.FIELDS)


def attributes(future):
    """The future's attributes: those of its ``vars`` and those kept in C (the driver's class default where
    the driver's future has not set one; None for the awaiter of ``pyfactories.aio``, which it has not)."""
    return {name: getattr(future, name, None) for name in FIELDS.union(vars(future))}


def _built(create, *args, **kwargs):
    """What ``create`` (a ``_create_response_future``) builds: (future class, future state, message
    class, message state), the timer it armed cancelled."""
    future = create(*args, **kwargs)
    future._cancel_timer()
    state = {k: v for k, v in attributes(future).items() if k not in VOLATILE}
    message = vars(future.message).copy()
    message.pop("timestamp", None)
    if "tablet_version_block" in message:  # scylla-driver's: random (0 too) for a key whose tablet it does not know
        block = message["tablet_version_block"]
        routed = getattr(future.query, "routing_key", None) is not None
        message["tablet_version_block"] = ("a random block", 0 <= block <= 0xFF) if routed else block
    query = state.pop("query")
    state["query"] = (type(query), {k: v for k, v in vars(query).items() if k != "_routing_key"}
                      if not isinstance(query, BatchStatement) else len(query._statements_and_parameters))
    state.pop("message")
    state["plan"] = type(future._spec_execution_plan)
    for name in ("_callbacks", "_errbacks"):  # ours are made by the first one added
        state[name] = getattr(future, name) or []
    return type(future), state, type(future.message), message, future


def requests(session):
    prepared = session.prepare(f"SELECT * FROM {KEYSPACE}.kv WHERE k = ? AND c = ?")
    simple = SimpleStatement(f"SELECT * FROM {KEYSPACE}.kv WHERE k = 1", consistency_level=ConsistencyLevel.QUORUM,
                             serial_consistency_level=ConsistencyLevel.SERIAL, fetch_size=7,
                             retry_policy=FallthroughRetryPolicy(), is_idempotent=True)
    batch = BatchStatement()
    batch.add(f"INSERT INTO {KEYSPACE}.kv (k, c, v) VALUES (2, 1, 'b')")
    host = next(iter(session._pools))
    return {
        "str": ((f"SELECT * FROM {KEYSPACE}.kv", None, False, None, None), {}),
        "str with parameters": ((f"SELECT * FROM {KEYSPACE}.kv WHERE k = %s", (1,), False, {}, 3.0), {}),
        "simple statement": ((simple, None, True, None, 2.0), {}),
        "simple, other profile": ((simple, None, False, None, 2.0), {"execution_profile": "other"}),
        "prepared and values": ((prepared, (1, 2), False, None, None), {}),
        "bound": ((prepared.bind((1, 3)), None, False, {}, 10.0), {"paging_state": b"\x01\x02"}),
        "bound, other profile": ((prepared.bind((1, 3)), None, False, None, None),
                                 {"execution_profile": session.get_execution_profile("other")}),
        "bound to a host": ((prepared.bind((1, 4)), None, False, None, 1.0), {"host": host}),
        "custom payload": ((prepared.bind((1, 4)), None, False, {"k": b"v"}, 1.0), {}),
        "batch": ((batch, None, False, None, 1.0), {}),
    }


def test_futures_and_messages_built_as_the_drivers(sessions):
    ours, _ = sessions
    driven = ("custom payload", "batch")
    for name, (args, kwargs) in requests(ours).items():
        mine = _built(ours._create_response_future, *args, **kwargs)
        theirs = _built(Session._create_response_future.__get__(ours), *args, **kwargs)
        # what the driver builds is awaitable (pyfactories.aio): its class otherwise the driver's
        assert mine[0] is (aio.AwaitableResponseFuture if name in driven else futures.LeanResponseFuture), name
        assert theirs[0] is ResponseFuture
        assert mine[1:4] == theirs[1:4], name
        assert mine[4].session is ours and mine[4]._load_balancer is theirs[4]._load_balancer


def test_replicas_as_the_drivers_metadata(sessions):
    """The node's own token map: each routing key's replicas are the list the driver's metadata gives,
    for a keyspace it has built, one it builds on the way and one it does not know."""
    from pyfactories.futures import _futures_py

    ours, _ = sessions
    metadata = ours.cluster.metadata
    assert metadata.token_map is not None and len(metadata.token_map.ring) > 1
    for spec in {futures._spec, _futures_py}:
        for keyspace in (KEYSPACE, "system_auth", "no_such_keyspace"):
            for key in [i.to_bytes(4, "big") for i in range(200)] + [b""]:
                found = spec.get_replicas(metadata, keyspace, key)
                assert found is metadata.get_replicas(keyspace, key) or found == [] == metadata.get_replicas(
                    keyspace, key), (keyspace, key)


def test_bad_requests_fail_as_the_drivers(sessions):
    ours, driver = sessions
    bad = [
        ("SELECT nothing FROM nowhere.at_all", None),
        (f"SELECT * FROM {KEYSPACE}.kv WHERE k = %s", ("not an int",)),
        (f"SELECT * FROM {KEYSPACE}.kv WHERE k = %s AND c = %s", (1,)),
    ]
    for query, params in bad:
        errors = []
        for session in (ours, driver):
            with pytest.raises(Exception) as info:
                session.execute(query, params)
            errors.append((type(info.value), str(info.value)))
        assert errors[0] == errors[1], query
    prepared = [s.prepare(f"SELECT * FROM {KEYSPACE}.kv WHERE k = ? AND c = ?") for s in (ours, driver)]
    for values in [(1,), (1, 2, 3), ("x", 1), (2**40, 1)]:
        errors = []
        for session, statement in zip((ours, driver), prepared):
            with pytest.raises(Exception) as info:
                session.execute(statement, values)
            errors.append((type(info.value), str(info.value)))
        assert errors[0] == errors[1], values
    with pytest.raises(ValueError) as mine:
        ours.execute("SELECT * FROM system.local", execution_profile="no such profile")
    with pytest.raises(ValueError) as theirs:
        driver.execute("SELECT * FROM system.local", execution_profile="no such profile")
    assert str(mine.value) == str(theirs.value)


def test_rows_pages_and_concurrent_as_the_drivers(sessions):
    ours, driver = sessions
    outcomes = []
    for session in sessions:
        prepared = session.prepare(f"SELECT * FROM {KEYSPACE}.kv WHERE k = ?")
        paged = SimpleStatement(f"SELECT * FROM {KEYSPACE}.kv WHERE k = 1", fetch_size=4)
        future = session.execute_async(paged)
        first = future.result()
        assert type(future) is (futures.LeanResponseFuture if session is ours else aio.AwaitableResponseFuture)
        pages = [list(first.current_rows)]
        while future.has_more_pages:
            future.start_fetching_next_page()
            pages.append(list(future.result().current_rows))
        outcomes.append((
            list(session.execute(prepared, (1,))),
            list(session.execute(paged)),
            pages,
            list(session.execute(prepared, (1,), execution_profile="other")),
            [(ok, list(rows)) for ok, rows in execute_concurrent_with_args(
                session, prepared, [(1,), (2,), (1,)], concurrency=2)],
        ))
    assert outcomes[0] == outcomes[1]
    assert len(outcomes[0][2]) == (ROWS + 3) // 4


def _concurrent_outcome(call):
    """What a helper answers (each result's success and rows, or its error's type and text), or raises."""
    try:
        results = call()
    except Exception as exc:  # noqa: BLE001 (the driver's error, compared)
        return "raised", type(exc).__name__, str(exc)
    return [(ok, list(r) if ok else (type(r).__name__, str(r))) for ok, r in results]


def test_the_drivers_concurrent_helpers_as_the_drivers(sessions, monkeypatch):
    """``execute_concurrent`` and ``execute_concurrent_with_args`` (the module's and the session's): the
    same results in the same order, the same errors in their places, the same error raised first when
    failing fast; on our session through our executor, on the driver's through the driver's (on a scylla-driver
    release pyfactories is not tested on, both through the driver's)."""
    ours, driver = sessions
    routed = futures.CONCURRENT_OURS  # (installed with the futures where they follow the driver's)
    assert (concurrent.execute_concurrent is futures.execute_concurrent) is routed
    listing = futures._spec.ListResults
    outcomes = []
    for session in sessions:
        prepared = session.prepare(f"SELECT * FROM {KEYSPACE}.kv WHERE k = 1 AND c = ?")
        mixed = [(prepared, (c,)) for c in range(ROWS)]
        mixed[3] = (f"SELECT nothing FROM {KEYSPACE}.kv", None)
        mixed[17] = (prepared, ("not an int",))
        outcomes.append((
            _concurrent_outcome(lambda: execute_concurrent_with_args(session, prepared, [(c,) for c in range(ROWS)],
                                                                     concurrency=7)),
            _concurrent_outcome(lambda: session.execute_concurrent_with_args(prepared, [(c,) for c in range(ROWS)],
                                                                             concurrency=1)),
            _concurrent_outcome(lambda: execute_concurrent(session, mixed, concurrency=5, raise_on_first_error=False)),
            _concurrent_outcome(lambda: execute_concurrent(session, iter(mixed), concurrency=50)),
            _concurrent_outcome(lambda: session.execute_concurrent(mixed[4:], raise_on_first_error=False,
                                                                   execution_profile="other")),
            _concurrent_outcome(lambda: list(execute_concurrent(session, mixed, raise_on_first_error=False,
                                                                results_generator=True))),
        ))
    assert outcomes[0] == outcomes[1]
    assert [ok for ok, _ in outcomes[0][2]] == [c not in (3, 17) for c in range(ROWS)]
    assert outcomes[0][3][0] == "raised"
    made = []
    monkeypatch.setattr(futures._spec, "ListResults", lambda *args: made.append(args[0]) or listing(*args))
    for session in sessions:
        prepared = session.prepare(f"SELECT * FROM {KEYSPACE}.kv WHERE k = 1 AND c = ?")
        assert _concurrent_outcome(lambda: execute_concurrent_with_args(session, prepared, [(1,)])) == [
            (True, list(session.execute(prepared, (1,))))]
        if hasattr(Session, "execute_concurrent"):  # not a method of scylla-driver's sessions
            session.execute_concurrent([(prepared, (1,))])
    assert made == ([ours, ours] if hasattr(Session, "execute_concurrent") else [ours]) if routed else []


def test_concurrent_requests_meet_every_hook_the_drivers_send_calls(sessions, monkeypatch):
    """A lean session's requests are sent without the session's and the future's methods only while they
    are the driver's (by its ``execute_async`` and our executor): a request init listener sees every
    future, and a replaced ``Session.execute_async`` (instrumentation), ``ResponseFuture.send_request``
    or ``clear_callbacks`` is called for every request, with the same results."""
    ours, _ = sessions
    prepared = ours.prepare(f"SELECT v FROM {KEYSPACE}.kv WHERE k = 1 AND c = ?")
    args = [(c,) for c in range(ROWS)]
    expected = _concurrent_outcome(lambda: execute_concurrent_with_args(ours, prepared, args, concurrency=7))
    assert [rows for _, rows in expected] == [[(f"row {c}",)] for c in range(ROWS)]

    seen = []
    ours.add_request_init_listener(seen.append)
    try:
        assert _concurrent_outcome(lambda: execute_concurrent_with_args(ours, prepared, args, concurrency=7)) == expected
    finally:
        ours.remove_request_init_listener(seen.append)
    assert len(seen) == ROWS and all(isinstance(f, futures.LeanResponseFuture) for f in seen)

    for cls, name in ((Session, "execute_async"), (ResponseFuture, "send_request"),
                      (ResponseFuture, "clear_callbacks")):
        calls = []
        drivers = getattr(cls, name)

        def counted(self, *a, _drivers=drivers, _calls=calls, **kw):
            _calls.append(self)
            return _drivers(self, *a, **kw)

        with monkeypatch.context() as patched:
            patched.setattr(cls, name, counted)
            assert _concurrent_outcome(lambda: execute_concurrent_with_args(ours, prepared, args, concurrency=7)) == (
                expected), name
            assert len(calls) == ROWS, name
            assert list(ours.execute(prepared, (3,))) == [("row 3",)]
            assert list(ours.execute_async(prepared, (4,)).result()) == [("row 4",)]
        assert len(calls) == ROWS + (2 if name != "clear_callbacks" else 0), name


def test_callbacks_from_the_event_loop_and_waiting_threads(sessions):
    ours, _ = sessions
    prepared = ours.prepare(f"SELECT v FROM {KEYSPACE}.kv WHERE k = 1 AND c = ?")
    done = threading.Semaphore(0)
    got = {}

    def on_rows(rows, c):
        got[c] = rows[0].v  # callbacks get the rows (a list), as the driver gives them
        done.release()

    def on_error(exc, c):
        got[c] = exc
        done.release()

    for c in range(ROWS):
        ours.execute_async(prepared, (c,)).add_callbacks(on_rows, on_error, callback_args=(c,), errback_args=(c,))
    for _ in range(ROWS):
        assert done.acquire(timeout=SETTLE_S)
    assert got == {c: f"row {c}" for c in range(ROWS)}

    waiting = [ours.execute_async(prepared, (c,)) for c in range(ROWS)]
    results = []
    threads = [threading.Thread(target=lambda f=f: results.append(f.result().one().v)) for f in waiting]
    for t in threads:
        t.start()
    for t in threads:
        t.join(SETTLE_S)
    assert sorted(results) == sorted(f"row {c}" for c in range(ROWS))


def test_tracing_warnings_and_lwt_as_the_drivers(sessions):
    ours, driver = sessions
    answers = []
    for session in sessions:
        future = session.execute_async(f"SELECT * FROM {KEYSPACE}.kv WHERE k = 1", trace=True)
        rows = future.result()
        trace = future.get_query_trace(max_wait=SETTLE_S)
        key = f"lwt-{time.time_ns()}-{id(session)}"
        insert = f"INSERT INTO {KEYSPACE}.lwt (k, v) VALUES (%s, %s) IF NOT EXISTS"
        first, second = session.execute(insert, (key, 1)), session.execute(insert, (key, 2))
        answers.append((len(list(rows)), trace.trace_id is not None and len(trace.events) > 0,
                        future.warnings, future.custom_payload, first.was_applied, second.was_applied,
                        second.one()[-1] if session.row_factory else None))
    assert answers[0] == answers[1]
    assert answers[0][4:6] == (True, False)


def test_client_timeouts_as_the_drivers(sessions):
    """A request that cannot be answered in time: the driver's OperationTimedOut, from ``result()`` and
    from the errback; a later request on the same session works."""
    for session in sessions:
        for _ in range(50):  # a tiny timeout: on a busy machine the answer may still come first, now and then
            future = session.execute_async(f"SELECT * FROM {KEYSPACE}.kv WHERE k = 1", timeout=1e-6)
            try:
                future.result()
            except OperationTimedOut:
                break
        with pytest.raises(OperationTimedOut):
            future.result()  # the same exception again
        caught = []
        future.add_errback(caught.append)
        assert len(caught) == 1 and isinstance(caught[0], OperationTimedOut)
        assert len(list(session.execute(f"SELECT * FROM {KEYSPACE}.kv WHERE k = 1"))) == ROWS


def test_server_errors_reach_errbacks(sessions):
    ours, _ = sessions
    caught = []
    ours.execute_async("SELECT nothing FROM nowhere.at_all").add_errback(caught.append)
    deadline = time.monotonic() + SETTLE_S
    while not caught and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(caught) == 1 and isinstance(caught[0], InvalidRequest)


def test_the_sessions_steps_as_the_drivers(sessions):
    """``execute``/``execute_async`` on the session with our futures: listeners see each request's future,
    ``execute_as`` and custom payloads go the driver's way with its errors, and a session class with a method
    of its own in the driver's place keeps it."""
    outcomes = []
    for session in sessions:
        seen = []
        listener = (lambda future, tag: seen.append((tag, type(future).__name__)))
        session.add_request_init_listener(listener, "mine")
        try:
            rows = list(session.execute(f"SELECT c FROM {KEYSPACE}.kv WHERE k = %s LIMIT 3", (1,)))
            started = session.execute_async(f"SELECT c FROM {KEYSPACE}.kv WHERE k = 1 LIMIT 2")
            more = [tuple(r) for r in started.result()]
            errors = []
            for kwargs in ({"execute_as": "nobody"}, {"custom_payload": {"k": b"v"}}):
                try:
                    errors.append(("ok", len(list(session.execute("SELECT key FROM system.local", **kwargs)))))
                except Exception as exc:  # noqa: BLE001 (compared)
                    errors.append((type(exc).__name__, str(exc)))
        finally:
            session.remove_request_init_listener(listener, "mine")
        outcomes.append(([tuple(r) for r in rows], more, errors, [tag for tag, _ in seen], len(seen)))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][4] == 4

    ours = sessions[0]
    own_calls = []

    class Own(type(ours)):
        def execute_async(self, *args, **kwargs):
            future = super().execute_async(*args, **kwargs)
            own_calls.append(type(future))
            return future

    own_class, ours.__class__ = type(ours), Own
    try:
        ours.execute_async("SELECT key FROM system.local").result()
        assert len(list(ours.execute("SELECT key FROM system.local"))) == 1  # the driver's execute calls Own's
        assert own_calls == [futures.LeanResponseFuture] * 2
    finally:
        ours.__class__ = own_class


def test_uninstall_puts_the_drivers_method_back(sessions):
    ours, _ = sessions
    assert futures.is_installed(ours)
    futures.uninstall(ours)
    try:
        assert type(vars(ours)["_create_response_future"]) is aio.AwaitableCreate  # what was under ours
        assert type(ours.execute_async("SELECT * FROM system.local")) is aio.AwaitableResponseFuture
    finally:
        futures.install(ours)
    assert type(ours.execute_async("SELECT * FROM system.local")) is futures.LeanResponseFuture


def test_a_lean_future_keeps_few_attributes_in_its_dict(sessions):
    """What a request stores on its lean future outside the fields stays far under the 30 names CPython 3.11
    shares among a class's instances, so no future's attributes become a dict of its own while two threads
    store on it (``FutureFields``: CPython 3.11 can then free the dict's values twice)."""
    ours, _ = sessions
    prepared = ours.prepare(f"SELECT * FROM {KEYSPACE}.kv WHERE k = ? AND c = ?")
    insert = ours.prepare(f"INSERT INTO {KEYSPACE}.kv (k, c, v) VALUES (4, ?, ?)")
    made = [ours.execute_async(prepared, (1, c)) for c in range(5)]
    made += [ours.execute_async(insert, (c, "v")) for c in range(5)]
    made += [ours.execute_async(f"SELECT * FROM {KEYSPACE}.kv WHERE k = 1", timeout=5.0),
             ours.execute_async(SimpleStatement(f"SELECT * FROM {KEYSPACE}.kv WHERE k = 1", fetch_size=3)),
             ours.execute_async("SELECT * FROM no_such_keyspace.t")]
    names = set()
    for future in made:
        future.add_callbacks(lambda _: None, lambda _: None)
        try:
            result = future.result()
            if future.has_more_pages:
                result.fetch_next_page()
        except InvalidRequest:
            pass
        assert type(future) is futures.LeanResponseFuture
        names |= set(vars(future))
    assert len(names) <= 10, sorted(names)


def test_no_futures_kept_after_a_long_run(sessions):
    ours, _ = sessions
    prepared = ours.prepare(f"INSERT INTO {KEYSPACE}.kv (k, c, v) VALUES (3, ?, ?)")

    def run(n):
        done = threading.Semaphore(0)
        for i in range(n):
            ours.execute_async(prepared, (i % 50, "v")).add_callbacks(lambda _: done.release(),
                                                                        lambda _: done.release())
            if i >= 100:
                assert done.acquire(timeout=SETTLE_S)
        for _ in range(min(n, 100)):
            assert done.acquire(timeout=SETTLE_S)

    def alive():
        gc.collect()
        return sum(1 for o in gc.get_objects() if type(o) is futures.LeanResponseFuture)

    def settled():
        """Futures alive once the event loop has finished the last callbacks (a leak never drops)."""
        deadline = time.monotonic() + SETTLE_S
        while (left := alive()) and time.monotonic() < deadline:
            time.sleep(0.05)
        return left

    run(500)
    before = settled()
    run(5000)
    assert settled() <= before == 0


def test_kept_results_leave_out_of_the_collector_what_cannot_lead_back(sessions):
    """Results kept in a list (``execute_concurrent``'s) keep their futures: a finished lean future's event
    and lock hold no reference a cycle could run through, so the compiled module leaves them out of the
    cyclic GC, and its listeners are let go when the helper clears them. All of them still work as the
    driver's: the lock is taken, a callback added afterwards runs with the result."""
    ours, _ = sessions
    insert = ours.prepare(f"INSERT INTO {KEYSPACE}.kv (k, c, v) VALUES (5, ?, ?)")
    results = concurrent.execute_concurrent_with_args(ours, insert, [(c, "v") for c in range(40)], concurrency=8)
    compiled = futures._spec.__name__.endswith("._futures")
    for ok, result in results:
        assert ok
        future = result.response_future
        assert type(future) is futures.LeanResponseFuture
        if compiled:  # (the twin clears them as the driver does: two empty lists)
            assert not gc.is_tracked(future._event) and not gc.is_tracked(future._callback_lock)
            assert future._callbacks is None and future._errbacks is None
        else:
            assert future._callbacks == [] and future._errbacks == []
        with future._callback_lock:
            assert not future._callback_lock.acquire(False)  # a lock, held
        seen, errors = [], []
        future.add_callbacks(seen.append, errors.append)
        future.add_errback(errors.append)
        assert seen == [None] and errors == [] and future._event.is_set() and future.result().all() == []


def test_concurrent_results_are_freed_with_their_last_reference(sessions):
    """Results of ``execute_concurrent_with_args`` once the caller lets them go: freed at once, the cyclic
    collector off (the executor leaves no cycle through itself, as the driver's leaves none), and none of
    them is the collector's garbage later. (Their futures are the driver's connection's: this session keeps
    it, whose timers hold a cycle through each future until it is collected.)"""
    ours, _ = sessions
    insert = ours.prepare(f"INSERT INTO {KEYSPACE}.kv (k, c, v) VALUES (6, ?, ?)")
    select = ours.prepare(f"SELECT * FROM {KEYSPACE}.kv WHERE k = 1 AND c = ?")
    gc.collect()
    gc.disable()
    try:
        for statement, parameters in ((insert, [(c, "v") for c in range(60)]), (select, [(c,) for c in range(60)])):
            results = execute_concurrent_with_args(ours, statement, parameters, concurrency=9)
            assert all(ok for ok, _ in results)
            kept = [weakref.ref(result) for _, result in results]
            del results
            assert [ref() for ref in kept] == [None] * len(parameters)
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            gc.collect()
            assert not [o for o in gc.garbage if isinstance(o, (ResultSet, concurrent.ExecutionResult))]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
    finally:
        gc.enable()
