"""The parts of ``pyfactories.futures`` that need no server, compiled (id ``c``, ``pyfactories.futures._futures``)
and pure Python (``py``, ``pyfactories.futures._futures_py``; the ``spec`` fixture): the completion event
against ``threading.Event``, and the callback methods, answers, messages and streams against the driver's own
``ResponseFuture`` methods on the same future state, on either driver line."""

from __future__ import annotations

import gc
import threading
import time
from functools import partial

import pytest
from cassandra.cluster import _NOT_SET, ResponseFuture
from hypothesis import given, settings
from hypothesis import strategies as st

from pyfactories import futures
from pyfactories.futures import _futures_py
from pyfactories.futures._scylla_py import SCYLLA
from tests.connection_fields import fields_of

#: whether the driver's futures can abort a retry (scylla-driver's with tablet versions)
ABORTABLE = hasattr(ResponseFuture, "_abort_retry")
SETTLE_S = 10.0


def test_the_installed_module_is_the_compiled_one():
    import pyfactories

    assert futures._spec.__name__ == ("pyfactories.futures._futures" if pyfactories.__impl__ == "cython"
                                      else "pyfactories.futures._futures_py")


def test_futures_are_ours_where_they_follow_the_drivers():
    """cassandra-driver's futures, and those of the scylla-driver releases pyfactories is tested on (whose
    ``ResponseFuture`` differs: ``_scylla_py``); ``execute_concurrent`` with them (scylla-driver's queues)."""
    import cassandra

    from pyfactories import _driver

    scylla = _driver.distribution() == "scylla-driver"
    assert futures._spec.SCYLLA is scylla
    assert futures.FUTURES_OURS is (not scylla or cassandra.__version__ in _driver.TESTED_RELEASES["scylla-driver"])
    assert futures.CONCURRENT_OURS is futures.FUTURES_OURS
    assert futures._spec.QUEUED is scylla  # (the releases tested on: their executors differ so)

    class Session:
        pass

    session = Session()
    session._create_response_future = "the driver's"
    assert futures.install(session) is futures.FUTURES_OURS
    assert futures.is_installed(session) is futures.FUTURES_OURS
    futures.uninstall(session)
    assert session._create_response_future == "the driver's" and not futures.is_installed(session)


# The completion event --------------------------------------------------------------------------

operations = st.lists(st.sampled_from(["set", "clear", "wait0", "is_set", "wait_short"]), max_size=30)


@given(ops=operations)
def test_once_answers_as_threading_event(spec, ops):
    ours, reference = spec.Once(), threading.Event()
    for op in ops:
        answers = []
        for event in (ours, reference):
            if op == "set":
                answers.append(event.set())
            elif op == "clear":
                answers.append(event.clear())
            elif op == "wait0":
                answers.append(event.wait(0))
            elif op == "wait_short":
                answers.append(event.wait(0.001))
            else:
                answers.append(event.is_set())
        assert answers[0] == answers[1], (op, answers)


def test_once_wait_negative_timeout_returns_at_once(spec):
    event = spec.Once()
    assert event.wait(-1) is False
    event.set()
    assert event.wait(-1) is True


def test_once_wakes_every_waiter(spec):
    event = spec.Once()
    woken, started = [], threading.Barrier(9)

    def wait():
        started.wait()
        woken.append(event.wait(SETTLE_S))

    threads = [threading.Thread(target=wait) for _ in range(8)]
    for t in threads:
        t.start()
    started.wait()
    time.sleep(0.05)  # let them block
    assert woken == []
    event.set()
    for t in threads:
        t.join(SETTLE_S)
    assert woken == [True] * 8


def test_once_waiter_with_timeout_then_set_later(spec):
    event = spec.Once()
    t0 = time.monotonic()
    assert event.wait(0.05) is False
    assert time.monotonic() - t0 >= 0.04
    threading.Timer(0.05, event.set).start()
    assert event.wait(SETTLE_S) is True


def test_once_clear_then_set_again_wakes_a_new_waiter(spec):
    event = spec.Once()
    event.set()
    assert event.wait() is True
    event.clear()
    assert event.wait(0.01) is False
    threading.Timer(0.05, event.set).start()
    assert event.wait(SETTLE_S) is True
    assert event.is_set()


def test_the_compiled_once_is_out_of_the_collector_and_cannot_be_given_state():
    """A finished future a caller keeps keeps its event: the compiled one holds nothing or a lock of the C
    type, so it stays out of the cyclic GC (a subclass's instance, which has a dict, is tracked), and
    nothing can be stored in it from Python (no pickling, no state to set)."""
    import pickle

    from pyfactories.futures import _futures

    once = _futures.Once()
    assert not gc.is_tracked(once)
    assert once.wait(0.001) is False  # a waiter made its lock (CPython's own): still out of the collector
    assert not gc.is_tracked(once)
    once.set()
    assert once.wait() is True and not gc.is_tracked(once)
    assert not hasattr(once, "__setstate_cython__") and not hasattr(once, "__reduce_cython__")
    with pytest.raises(TypeError):
        pickle.dumps(once)

    class Kept(_futures.Once):
        pass

    assert gc.is_tracked(Kept())


def test_once_set_races_waiters(spec):
    """Many set/wait races: no waiter misses a set (each would block until its timeout)."""
    for _ in range(300):
        event = spec.Once()
        got = []
        waiter = threading.Thread(target=lambda: got.append(event.wait(SETTLE_S)))
        waiter.start()
        event.set()
        waiter.join(SETTLE_S)
        assert got == [True]


# The callback methods ---------------------------------------------------------------------------

class Timer:
    def __init__(self):
        self.cancelled = 0

    def cancel(self):
        self.cancelled += 1


class RequestTimer:
    def __init__(self):
        self.values = []

    def addValue(self, value):  # noqa: N802 (the driver's name)
        self.values.append(value)


class Metrics:
    def __init__(self):
        self.request_timer = RequestTimer()


def bare(cls, event, metrics=None):
    """A future of class ``cls`` with only the state the callback methods read."""
    future = cls.__new__(cls)
    future._callback_lock = threading.Lock()
    future._callbacks, future._errbacks = [], []
    future._event = event
    future._timer = Timer()
    future._metrics = metrics
    future._start_time = time.time()
    if ABORTABLE:  # scylla-driver's futures finish only while no retry was aborted
        future._retry_aborted, future._page_generation = False, 0
    return future


@pytest.fixture
def lean(spec):
    """A ResponseFuture with the module under test's fields (``FutureFields``; its methods set per test)."""
    return type("Lean", (spec.FutureFields, ResponseFuture), {})


@pytest.fixture
def pair(spec):
    """``(ours, the driver's)``: bare futures of the module under test's methods and the driver's."""
    ours = type("Ours", (spec.FutureFields, ResponseFuture), {
        "_set_final_result": spec.set_final_result, "_set_final_exception": spec.set_final_exception,
        "add_callback": spec.add_callback, "add_errback": spec.add_errback, "add_callbacks": spec.add_callbacks,
    })
    return bare(ours, spec.Once(), Metrics()), bare(ResponseFuture, threading.Event(), Metrics())


def record(log, tag):
    return lambda *args, **kwargs: log.append((tag, args, kwargs))


@pytest.mark.parametrize("outcome", ["result", "exception"])
def test_callbacks_and_errbacks_as_the_drivers(pair, outcome):
    logs = []
    for future in pair:
        log = []
        future.add_callback(record(log, "cb1"))
        future.add_callback(record(log, "cb2"), 1, 2, k="v")
        future.add_errback(record(log, "eb1"), "e")
        assert future.add_callbacks(record(log, "cb3"), record(log, "eb2"), callback_args=(3,),
                                    callback_kwargs={"x": 1}, errback_args=(4,), errback_kwargs={"y": 2}) is None
        assert not future._event.is_set()
        value = {"result": ["row"], "exception": ValueError("boom")}[outcome]
        (future._set_final_result if outcome == "result" else future._set_final_exception)(value)
        assert future._event.is_set() and future._event.wait(0)
        assert future._timer.cancelled == 1
        assert len(future._metrics.request_timer.values) == 1 and future._metrics.request_timer.values[0] >= 0
        # added after the outcome: run on the spot if it is theirs, never otherwise
        future.add_callback(record(log, "late_cb"), 5)
        future.add_errback(record(log, "late_eb"), 6)
        future.add_callbacks(record(log, "late_cb2"), record(log, "late_eb2"), callback_args=[7],
                             errback_kwargs={"z": 8})
        logs.append([(tag, [a if not isinstance(a, Exception) else str(a) for a in args], kwargs)
                     for tag, args, kwargs in log])
    assert logs[0] == logs[1]
    assert logs[0], "no callback ran"


def test_add_callbacks_takes_and_refuses_what_the_driver_does(pair):
    """Arguments the driver takes (kwargs as pairs) are kept as it keeps them; those it refuses, refused."""
    cases = [dict(callback_kwargs=[("a", 1)]), dict(callback_args=[1, 2], errback_kwargs={"b": 2}),
             dict(callback_args=3), dict(errback_kwargs=5), dict(callback_kwargs="ab")]
    for kwargs in cases:
        seen = []
        for future in pair:
            future._callbacks, future._errbacks = [], []
            try:
                future.add_callbacks(print, repr, **kwargs)
                seen.append(("kept", future._callbacks, future._errbacks))
            except Exception as exc:
                seen.append(("refused", type(exc)))
        assert seen[0] == seen[1], kwargs


def test_a_future_without_callbacks_finishes(spec, lean):
    for finish in (spec.set_final_result, spec.set_final_exception):
        future = bare(lean, spec.Once())
        future._callbacks = future._errbacks = None  # the class's: ours are made by the first one added
        finish(future, ValueError("x"))
        assert future._event.is_set()


@pytest.mark.parametrize("event", ["once", "subclass", "threading"])
def test_a_future_finished_sets_its_event_whatever_it_is(spec, lean, event):
    """A future's event is set when it finishes: ours, a subclass's own ``set``, or an event put in its
    place (the driver's kind)."""
    calls = []

    class Mine(spec.Once):
        def set(self):
            calls.append("set")
            super().set()

    made = {"once": spec.Once, "subclass": Mine, "threading": threading.Event}[event]()
    for finish in (spec.set_final_result, spec.set_final_exception):
        calls.clear()
        future = bare(lean, made)
        made.clear()
        finish(future, ValueError("x"))
        assert future._event is made and made.is_set() and made.wait(0)
        assert calls == (["set"] if event == "subclass" else [])


def test_a_result_of_none_is_a_result(pair):
    for future in pair:
        log = []
        future._set_final_result(None)
        future.add_callback(record(log, "cb"))
        assert log == [("cb", (None,), {})]
        assert future._final_result is None


def test_no_metrics_no_timer(spec, lean):
    future = bare(lean, spec.Once())
    future._timer = None
    spec.set_final_result(future, 1)
    assert future._final_result == 1 and future._event.is_set()


def test_a_callback_error_propagates_as_the_drivers(pair):
    errors = []
    for future in pair:
        future.add_callback(lambda rows: 1 / 0)
        with pytest.raises(ZeroDivisionError) as info:
            future._set_final_result("rows")
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_callback_added_from_another_thread_while_finishing_runs_once(spec, lean):
    """add_callback racing set_final_result: each callback runs exactly once."""
    for _ in range(200):
        future = bare(lean, spec.Once())
        ran = []
        adder = threading.Thread(target=lambda: spec.add_callback(future, ran.append))
        adder.start()
        spec.set_final_result(future, "done")
        adder.join(SETTLE_S)
        assert ran == ["done"]


def test_waiting_on_an_unfinished_future_from_another_thread(spec, lean):
    future = bare(lean, spec.Once())
    threading.Timer(0.05, partial(spec.set_final_result, future, "late")).start()
    assert future._event.wait(SETTLE_S) is True
    assert future._final_result == "late"


def test_no_references_kept(spec, lean):
    """Finishing many futures keeps none of them, their callbacks or their results alive."""
    class Result:
        pass

    def cycle():
        future = bare(lean, spec.Once(), Metrics())
        future.add_callbacks(lambda r: None, lambda e: None)
        spec.set_final_result(future, Result())
        future._event.wait()

    for _ in range(100):
        cycle()
    gc.collect()
    before = sum(1 for o in gc.get_objects() if type(o) in (lean, Result))
    for _ in range(5000):
        cycle()
    gc.collect()
    after = sum(1 for o in gc.get_objects() if type(o) in (lean, Result))
    assert after <= before


def test_not_set_sentinel_is_the_drivers(spec, lean):
    future = bare(lean, spec.Once())
    assert future._final_result is _NOT_SET
    log = []
    spec.add_callback(future, log.append)
    assert log == []


#: every attribute a lean future keeps out of its ``__dict__`` (``FutureFields``)
FIELDS = list(_futures_py.FIELDS)


def test_the_compiled_futures_keep_these_fields_in_c():
    from pyfactories.futures import _futures

    fields = {name for name, kind in vars(_futures.FutureFields).items() if type(kind).__name__ == "getset_descriptor"}
    assert fields == set(FIELDS) and len(FIELDS) == len(set(FIELDS))


def test_a_lean_future_has_the_drivers_attributes_before_and_after_they_are_set(spec, lean):
    """Before a request sets them, its fields are the driver's class attributes (None where it has none);
    set from Python, each reads back and no other moves."""
    future, theirs = lean.__new__(lean), ResponseFuture.__new__(ResponseFuture)
    for name in FIELDS:
        assert getattr(future, name, None) is getattr(theirs, name, None), name
    for i, name in enumerate(FIELDS):
        setattr(future, name, ("set", i))
    assert [getattr(future, name) for name in FIELDS] == [("set", i) for i in range(len(FIELDS))]
    assert not set(FIELDS) & set(vars(future))


def test_a_future_class_without_the_fields_is_refused(spec):
    class Session:
        _create_response_future = None

    with pytest.raises(TypeError, match="FutureFields"):
        spec.LeanCreate(Session(), ResponseFuture)


# Timestamps ---------------------------------------------------------------------------------------


def test_timestamps_as_the_drivers(spec, caplog):
    from cassandra.timestamps import MonotonicTimestampGenerator

    ours, theirs = MonotonicTimestampGenerator(), MonotonicTimestampGenerator()
    now = int(time.time() * 1e6)
    first = spec.timestamp(ours)
    assert now <= first <= int(time.time() * 1e6) and ours.last == first
    stamps = [spec.timestamp(ours) for _ in range(1000)]
    assert stamps == sorted(set(stamps)) and stamps[0] > first
    # a clock behind the last timestamp: one more than the last, and the driver's warning
    for generator in (ours, theirs):
        generator.last = now + 5_000_000
    with caplog.at_level("WARNING", logger="cassandra.timestamps"):
        assert [spec.timestamp(ours), spec.timestamp(ours)] == [theirs(), theirs()] == [now + 5_000_001, now + 5_000_002]
    warnings = [r.getMessage().split(" microseconds")[0].split("(")[0] for r in caplog.records]
    assert len(warnings) == 2 and warnings[0].startswith("Clock skew detected")

    class Own(MonotonicTimestampGenerator):
        def __call__(self):
            return 42

    assert spec.timestamp(Own()) == 42 and spec.timestamp(lambda: 7) == 7


# Returning a stream to the driver's pool -----------------------------------------------------------

class Connection:
    """The state of a connection ``HostConnection.return_connection`` reads."""

    def __init__(self, in_flight=3, defunct=False, closed=False, signaled_error=True):
        self.lock = threading.Lock()
        self.in_flight = in_flight
        self.is_defunct, self.is_closed, self.signaled_error = defunct, closed, signaled_error
        self.orphaned_request_ids = set()
        self.closed_by_pool = 0

    def close(self):
        self.closed_by_pool += 1


def host_connection(connection, trashed=False):
    """A driver ``HostConnection`` holding ``connection``, without connecting anything."""
    from cassandra.pool import HostConnection

    pool = HostConnection.__new__(HostConnection)
    pool._lock = threading.Lock()
    pool._stream_available_condition = threading.Condition(pool._lock)
    pool._trash = {connection} if trashed else set()
    pool._connection = connection
    pool.shutdown_on_error = False
    pool.host = "127.0.0.1"
    return pool


def _state(pool, connection):
    return (connection.in_flight, connection.closed_by_pool, len(pool._trash), pool._connection is connection)


@pytest.mark.parametrize("case", [
    dict(), dict(defunct=True), dict(closed=True), dict(trashed=True, in_flight=1), dict(trashed=True, in_flight=4),
])
@pytest.mark.parametrize("with_fields", [False, True], ids=["dict", "fields"])
def test_streams_return_to_the_pool_as_the_drivers(spec, case, with_fields):
    trashed = case.pop("trashed", False)
    ours = type("FieldsConnection", (fields_of(spec), Connection), {}) if with_fields else Connection
    states = []
    for give_back, cls in ((spec.return_connection, ours), (lambda pool, conn: pool.return_connection(conn), Connection)):
        connection = cls(**case)
        pool = host_connection(connection, trashed)
        give_back(pool, connection)
        states.append(_state(pool, connection))
    assert states[0] == states[1]


def test_a_thread_waiting_for_a_stream_is_woken(spec):
    connection = Connection(in_flight=1)
    pool = host_connection(connection)
    woken = []

    def wait():
        with pool._stream_available_condition:
            woken.append(pool._stream_available_condition.wait(SETTLE_S))

    waiter = threading.Thread(target=wait)
    waiter.start()
    deadline = time.monotonic() + SETTLE_S
    while not pool._stream_available_condition._waiters and time.monotonic() < deadline:
        time.sleep(0.001)
    spec.return_connection(pool, connection)
    waiter.join(SETTLE_S)
    assert woken == [True] and connection.in_flight == 0


def test_a_replaced_return_connection_is_the_one_called(spec, monkeypatch):
    """The driver's method replaced on its class, or on one pool: the replacement gets the stream back."""
    from cassandra.pool import HostConnection

    calls = []
    connection = Connection(in_flight=2)
    pool = host_connection(connection)
    monkeypatch.setattr(HostConnection, "return_connection", lambda self, conn: calls.append(("class", conn)))
    spec.return_connection(pool, connection)
    monkeypatch.undo()
    pool.return_connection = lambda conn: calls.append(("pool", conn))
    spec.return_connection(pool, connection)
    assert calls == [("class", connection), ("pool", connection)] and connection.in_flight == 2
    del pool.return_connection
    spec.return_connection(pool, connection)
    assert connection.in_flight == 1 and len(calls) == 2


def test_other_pools_are_asked_as_they_are(spec):
    class Pool:
        returned = []

        def return_connection(self, connection):
            self.returned.append(connection)

    pool = Pool()
    spec.return_connection(pool, "connection")
    assert pool.returned == ["connection"]


def _answer(kind, rows=None, **extra):
    from cassandra.protocol import ResultMessage

    message = ResultMessage(kind)
    message.column_names, message.column_types, message.parsed_rows = ["a", "b"], [None, None], rows
    message.paging_state = extra.pop("paging_state", None)
    for name, value in extra.items():
        setattr(message, name, value)
    return message


class ClaimsResult:
    """An answer that says, through its ``__class__``, that it is a result."""

    kind, paging_state, column_names, column_types, parsed_rows = 1, None, None, None, None

    @property
    def __class__(self):
        from cassandra.protocol import ResultMessage

        return ResultMessage


@pytest.mark.parametrize("answer", ["void", "rows", "rows, warnings and payload", "failing factory",
                                    "claims to be a result", "not a result to its metaclass"])
def test_answers_taken_as_the_drivers(spec, lean, answer, monkeypatch):
    from cassandra.protocol import RESULT_KIND_ROWS, RESULT_KIND_VOID, ResultMessage

    if answer == "not a result to its metaclass":  # its metaclass says no to every answer with warnings
        monkeypatch.setattr(type(ResultMessage), "__instancecheck__",
                            lambda cls, instance: getattr(instance, "warnings", None) is None, raising=False)

    def factory(names, rows):
        if answer == "failing factory":
            raise ValueError("no rows today")
        return [dict(zip(names, row)) for row in rows]

    outcomes = []
    for take in (spec.set_result, ResponseFuture._set_result):
        future = bare(lean, spec.Once() if take is spec.set_result else threading.Event(), Metrics())
        future.message = type("Message", (), {"continuous_paging_options": None})()
        future.row_factory, future.prepared_statement = factory, None
        response = {
            "void": lambda: _answer(RESULT_KIND_VOID),
            "rows": lambda: _answer(RESULT_KIND_ROWS, [(1, 2), (3, 4)], paging_state=b"p"),
            "rows, warnings and payload": lambda: _answer(RESULT_KIND_ROWS, [(5, 6)], warnings=["w"],
                                                          custom_payload={"k": b"v"}),
            "failing factory": lambda: _answer(RESULT_KIND_ROWS, [(1, 2)]),
            "claims to be a result": ClaimsResult,
            "not a result to its metaclass": lambda: _answer(RESULT_KIND_VOID, warnings=["w"]),
        }[answer]()
        take(future, "host", None, None, response)
        exc = future._final_exception
        outcomes.append((future._final_result, type(exc), str(exc), future.coordinator_host, future._warnings,
                         future._custom_payload, future._paging_state, future._col_names, future._event.is_set()))
    assert outcomes[0] == outcomes[1]


class Pool:
    """A pool that lends its one connection and records what it lends and gets back (shut down or not)."""

    def __init__(self, connection=None, shut_down=False):
        self.connection, self.is_shutdown, self.borrowed, self.returned = connection, shut_down, [], []

    def borrow_connection(self, timeout, **routing):
        self.borrowed.append((timeout, routing))
        return self.connection, 7

    def return_connection(self, connection, stream_was_orphaned=False):
        self.returned.append((connection, stream_was_orphaned))


@pytest.mark.parametrize("shut_down", [False, True])
@pytest.mark.parametrize("answer", ["rows", "a new result metadata id"])
def test_a_connection_goes_back_to_its_pool_as_the_drivers(spec, lean, shut_down, answer):
    """Given back unless the pool is shut down on scylla-driver, always on cassandra-driver."""
    from cassandra.protocol import RESULT_KIND_ROWS

    outcomes = []
    for take in (spec.set_result, ResponseFuture._set_result):
        future = bare(lean, spec.Once() if take is spec.set_result else threading.Event(), Metrics())
        future.message = type("Message", (), {"continuous_paging_options": None})()
        future.row_factory, future.prepared_statement = (lambda names, rows: [tuple(row) for row in rows]), None
        pool = Pool(shut_down=shut_down)
        extra = {"result_metadata_id": b"id"} if answer == "a new result metadata id" else {}
        take(future, "host", "connection", pool, _answer(RESULT_KIND_ROWS, [(1, 2)], **extra))
        outcomes.append((pool.returned, future._final_result, future._final_exception))
    assert outcomes[0] == outcomes[1] and outcomes[0][1] == [(1, 2)]


@pytest.mark.parametrize("generation", [0, 1])
@pytest.mark.parametrize("before", ["nothing", "a result", "an exception", "an aborted retry"])
def test_an_aborted_retry_finishes_as_the_drivers(pair, generation, before):
    """scylla-driver's futures finish a retry aborted for the page they are on, once, and nothing after
    it; cassandra-driver's take no ``retry_abort_generation``."""
    outcomes = []
    for future in pair:
        seen = []
        future._callbacks, future._errbacks = [(record(seen, "callback"), (), {})], [(record(seen, "errback"), (), {})]
        try:
            if before == "a result":
                future._set_final_result("rows")
            elif before == "an exception":
                future._set_final_exception(ValueError("first"))
            elif before == "an aborted retry":
                future._set_final_exception(KeyError("aborted"), retry_abort_generation=0)
            future._set_final_exception(ConnectionError("shut down"), retry_abort_generation=generation)
            then = "finished"
        except TypeError as exc:
            then = type(exc).__name__
        future._set_final_result("late")
        outcomes.append((then, future._final_result, repr(future._final_exception), future._timer.cancelled,
                         len(future._metrics.request_timer.values), future._event.is_set(), repr(seen)))
    assert outcomes[0] == outcomes[1]


class Sender:
    """A connection whose ``send_msg`` records what it sends, or fails."""

    def __init__(self, fails):
        self.fails, self.sent = fails, []

    def send_msg(self, msg, request_id, cb, encoder=None, decoder=None, result_metadata=None):
        if self.fails:
            raise OSError("the socket is gone")
        self.sent.append((msg, request_id, result_metadata))
        return 42


class Statement:
    """What sending reads of a statement; a flipping one is true when first asked, false after (asked once,
    as the driver asks it, it is sent by its routing key)."""

    routing_key, keyspace, table = b"k", "ks", "t"

    def __init__(self, flipping=False):
        self.flipping, self.asked = flipping, 0

    def __bool__(self):
        self.asked += 1
        return not self.flipping or self.asked == 1


@pytest.mark.parametrize("fails", [False, True])
@pytest.mark.parametrize("statement", [True, False, "flipping"])
def test_a_request_is_sent_as_the_drivers(spec, lean, fails, statement):
    """The pool asked as the driver asks it (by routing key, keyspace, table and token on scylla-driver),
    the stream recorded and put back when sending fails, the error kept by host, the connection returned."""
    outcomes = []
    for send in (spec.query, ResponseFuture._query):
        future = bare(lean, threading.Event())
        connection = Sender(fails)
        pool = Pool(connection)
        future.session = type("Session", (), {"_pools": {"host": pool}})()
        future.message, future.prepared_statement, future._errors, future.attempted_hosts = "message", None, {}, []
        future.query = Statement(flipping=statement == "flipping") if statement else None
        future._req_id, future._routing_token, future._bound_result_metadata = 3, "token", ["metadata"]
        answer = send(future, "host")
        returned = [(given is connection, orphaned) for given, orphaned in pool.returned]
        outcomes.append((answer, pool.borrowed, returned, connection.sent, future._req_id, getattr(future.query, "asked", 0),
                         repr(future._errors.get("host")), future.attempted_hosts, future._current_host,
                         vars(future).get("_control_connection_query_attempted"),
                         vars(future).get("request_encoded_size")))
    assert outcomes[0] == outcomes[1]
    assert (outcomes[0][0] is None) is fails


class HostKey:
    """A host as the driver's: equal to another and hashed by its end point, in Python."""

    def __init__(self, endpoint):
        self.endpoint, self.hashed = endpoint, 0

    def __eq__(self, other):
        return isinstance(other, HostKey) and other.endpoint == self.endpoint

    def __hash__(self):
        self.hashed += 1
        return hash(self.endpoint)


class OwnPools(dict):
    """A session's pools that answer ``get`` their own way."""

    def get(self, key, default=None):
        return super().get(HostKey("elsewhere"), default)


def _pools(kind, host, pool):
    others = {HostKey(f"other {i}"): Pool(Sender(False)) for i in range(30 if kind == "among many" else 3)}
    # ints hash to themselves: a table of eight slots, the host's pool in slot 1, the others in 4 to 6
    moved = {HostKey(100 + i): Pool(Sender(False)) for i in range(3)}
    found = {"itself": {host: pool}, "among a few": {**others, host: pool}, "among many": {**others, host: pool},
             "before it moved": {**moved, host: pool},
             "an equal host": {HostKey(host.endpoint): pool}, "absent": others,
             "a dict of its own": OwnPools({host: pool, HostKey("elsewhere"): Pool(Sender(False))})}
    return found[kind]


def _sent_through(send, lean, kind, moved=False):
    """What ``send`` (a future's ``_query``) answers for a host whose pool is kept as ``kind`` says (its
    end point changed after that when ``moved``), which pool lent the stream, and how often the host was
    hashed."""
    future = bare(lean, threading.Event())
    host, pool = HostKey(1 if moved else "host"), Pool(Sender(False))
    future.session = type("Session", (), {"_pools": _pools(kind, host, pool)})()
    future.message, future.prepared_statement, future._errors, future.attempted_hosts = "message", None, {}, []
    future.query, future._req_id = None, 3
    future._routing_token, future._bound_result_metadata = "token", ["metadata"]
    if moved:  # to a hash whose slot is empty: the dict's lookup stops there, without the host's entry
        host.endpoint = 2
    host.hashed = 0
    answer = send(future, host)
    hashed = host.hashed
    lent = [p is pool for p in future.session._pools.values() if p.borrowed]
    return (answer, lent, repr(future._errors.get(host)), len(future.attempted_hosts)), hashed


@pytest.mark.parametrize("kind", ["itself", "among a few", "among many", "an equal host", "absent",
                                  "a dict of its own"])
def test_a_hosts_pool_is_the_one_the_driver_finds(spec, lean, kind):
    """The pool a request is sent through is the one ``session._pools.get(host)`` gives: the host's own
    entry, an equal host's, none (the driver's error kept by host), or what a dict of its own answers;
    compiled, on cassandra-driver, a host among a few pools is found without hashing it."""
    (ours, hashed), (drivers, _) = _sent_through(spec.query, lean, kind), _sent_through(ResponseFuture._query, lean, kind)
    assert ours == drivers
    assert (ours[0] is None) is (kind == "absent")
    assert ours[1] == {"absent": [], "a dict of its own": [False]}.get(kind, [True])
    found_itself = spec.__name__.endswith("_futures") and not SCYLLA and kind in ("itself", "among a few")
    if kind != "a dict of its own":  # (whose get never hashes the host)
        assert (hashed == 0) is found_itself


def test_a_host_that_moved_after_its_pool_was_made(spec, lean):
    """scylla-driver gives a host a new end point (a new hash) when its address changes, and may keep
    its pool under the old hash: there the pool is the one the driver's lookup finds (none). cassandra-driver
    never moves a host; there, compiled, a host moved by other code is found as itself, under its pool."""
    ours, _ = _sent_through(spec.query, lean, "before it moved", moved=True)
    drivers, _ = _sent_through(ResponseFuture._query, lean, "before it moved", moved=True)
    assert drivers[0] is None and drivers[1] == []
    if SCYLLA or not spec.__name__.endswith("_futures"):
        assert ours == drivers
    else:
        assert ours[0] == 7 and ours[1] == [True] and ours[2] == "None"


# Messages -----------------------------------------------------------------------------------------

anything = st.one_of(st.none(), st.booleans(), st.integers(), st.binary(max_size=4), st.text(max_size=3),
                     st.lists(st.binary(max_size=3), max_size=3))


@settings(max_examples=200)
@given(args=st.lists(anything, min_size=9, max_size=9))
def test_execute_messages_as_the_drivers(spec, args):
    from cassandra.protocol import ExecuteMessage

    *positional, skip_meta, result_metadata_id = args
    ours = spec.execute_message(*positional, skip_meta, result_metadata_id)
    theirs = ExecuteMessage(*positional, skip_meta=skip_meta, continuous_paging_options=None,
                            result_metadata_id=result_metadata_id)
    assert type(ours) is ExecuteMessage and vars(ours) == vars(theirs)
    assert list(vars(ours)) == list(vars(theirs))  # set in the same order


@settings(max_examples=200)
@given(args=st.lists(anything, min_size=7, max_size=7))
def test_query_messages_as_the_drivers(spec, args):
    from cassandra.protocol import QueryMessage

    *positional, keyspace = args
    ours, theirs = spec.query_message(*positional, keyspace), QueryMessage(*positional, None, keyspace)
    assert type(ours) is QueryMessage and vars(ours) == vars(theirs)
    assert list(vars(ours)) == list(vars(theirs))


def test_the_compiled_module_knows_how_the_drivers_messages_are_laid_out():
    """On every tested release both messages are built without their class call (the tests above then
    check that the result is the class's); a driver whose ``__init__`` lays them out otherwise gets its class."""
    from pyfactories.futures import _futures

    assert _futures.MESSAGES_LAID_OUT is True


def test_a_replaced_message_init_is_called(spec, monkeypatch):
    from cassandra.protocol import ExecuteMessage, QueryMessage

    for cls, make in ((ExecuteMessage, lambda: spec.execute_message(b"id", [], 1, None, 5, None, 7, True, None)),
                      (QueryMessage, lambda: spec.query_message("q", 1, None, 5, None, 7, None))):
        drivers = cls.__init__

        def init(self, *args, **kwargs):
            drivers(self, *args, **kwargs)
            self.seen = True

        monkeypatch.setattr(cls, "__init__", init)
        assert make().seen is True
        monkeypatch.undo()


# Locks ------------------------------------------------------------------------------------------

class CountingLock:
    """A context manager in a lock's place: taken the way ``with`` takes it."""

    def __init__(self):
        self.entered = self.exited = 0

    def __enter__(self):
        self.entered += 1

    def __exit__(self, *exc):
        self.exited += 1
        return False


@pytest.mark.parametrize("make", [threading.Lock, threading.RLock, CountingLock], ids=["lock", "rlock", "other"])
def test_any_lock_is_taken_and_given_back(pair, make):
    """The future's lock, of any kind, is held while its listeners are added and its outcome set, and
    given back: after an answer, and after a listener list that cannot be read raises."""
    for future in pair:
        future._callback_lock = lock = make()
        seen = []
        future.add_callbacks(seen.append, seen.append)
        future._set_final_result([(1,)])
        assert seen == [[(1,)]]
        other = bare(type(future), type(future._event)(), Metrics())
        other._callback_lock = lock
        other._errbacks = 42  # not a list of listeners
        with pytest.raises(TypeError):
            other._set_final_exception(ValueError("x"))
        if isinstance(lock, CountingLock):
            assert lock.entered == lock.exited >= 3  # (the driver takes it once more: per listener)
        else:
            assert lock.acquire(False)  # given back
            lock.release()
