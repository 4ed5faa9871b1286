"""The parts of ``pyfactories.futures`` that need no server, compiled (id ``c``, ``pyfactories.futures._futures``)
and pure Python (``py``, ``pyfactories.futures._futures_py``): the completion event against ``threading.Event``,
and the callback methods against the driver's own ``ResponseFuture`` methods on the same future state."""

from __future__ import annotations

import gc
import importlib
import threading
import time
from functools import partial

import pytest
from cassandra.cluster import _NOT_SET, ResponseFuture
from cassandra.metadata import MAX_LONG, MIN_LONG, Murmur3Token, Token
from hypothesis import given, settings
from hypothesis import strategies as st

from pyfactories import futures

MODULES = {"c": "pyfactories.futures._futures", "py": "pyfactories.futures._futures_py"}
SETTLE_S = 10.0


@pytest.fixture(scope="module", params=sorted(MODULES), ids=sorted(MODULES))
def spec(request):
    return importlib.import_module(MODULES[request.param])


def test_the_installed_module_is_the_compiled_one():
    import pyfactories

    assert futures._spec.__name__ == ("pyfactories.futures._futures" if pyfactories.__impl__ == "cython"
                                      else "pyfactories.futures._futures_py")


def test_futures_are_ours_on_cassandra_driver_only():
    """scylla-driver's ResponseFuture differs: its sessions keep the driver's futures."""
    from pyfactories import _driver

    assert futures.FUTURES_OURS is (_driver.distribution() == "cassandra-driver")

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
    return future


class Lean(ResponseFuture):
    """A ResponseFuture with the module under test's methods (set per test)."""


@pytest.fixture
def pair(spec):
    """``(ours, the driver's)``: bare futures of the module under test's methods and the driver's."""
    ours = type("Ours", (ResponseFuture,), {
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


def test_a_future_without_callbacks_finishes(spec):
    for finish in (spec.set_final_result, spec.set_final_exception):
        future = bare(Lean, spec.Once())
        future._callbacks = future._errbacks = None  # the class's: ours are made by the first one added
        finish(future, ValueError("x"))
        assert future._event.is_set()


def test_a_result_of_none_is_a_result(pair):
    for future in pair:
        log = []
        future._set_final_result(None)
        future.add_callback(record(log, "cb"))
        assert log == [("cb", (None,), {})]
        assert future._final_result is None


def test_no_metrics_no_timer(spec):
    future = bare(Lean, spec.Once())
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


def test_callback_added_from_another_thread_while_finishing_runs_once(spec):
    """add_callback racing set_final_result: each callback runs exactly once."""
    for _ in range(200):
        future = bare(Lean, spec.Once())
        ran = []
        adder = threading.Thread(target=lambda: spec.add_callback(future, ran.append))
        adder.start()
        spec.set_final_result(future, "done")
        adder.join(SETTLE_S)
        assert ran == ["done"]


def test_waiting_on_an_unfinished_future_from_another_thread(spec):
    future = bare(Lean, spec.Once())
    threading.Timer(0.05, partial(spec.set_final_result, future, "late")).start()
    assert future._event.wait(SETTLE_S) is True
    assert future._final_result == "late"


def test_no_references_kept(spec):
    """Finishing many futures keeps none of them, their callbacks or their results alive."""
    class Result:
        pass

    def cycle():
        future = bare(Lean, spec.Once(), Metrics())
        future.add_callbacks(lambda r: None, lambda e: None)
        spec.set_final_result(future, Result())
        future._event.wait()

    for _ in range(100):
        cycle()
    gc.collect()
    before = sum(1 for o in gc.get_objects() if type(o) in (Lean, Result))
    for _ in range(5000):
        cycle()
    gc.collect()
    after = sum(1 for o in gc.get_objects() if type(o) in (Lean, Result))
    assert after <= before


def test_not_set_sentinel_is_the_drivers(spec):
    future = bare(Lean, spec.Once())
    assert future._final_result is _NOT_SET
    log = []
    spec.add_callback(future, log.append)
    assert log == []


# The query plan and the timestamps ------------------------------------------------------------

class Metadata:
    """The cluster metadata a TokenAwarePolicy asks: replicas per (keyspace, routing key)."""

    def __init__(self, replicas):
        self.replicas = replicas
        self.asked = []

    def get_replicas(self, keyspace, key):
        self.asked.append((keyspace, key))
        return list(self.replicas)  # a new list each time: shuffling one leaves the next as it was


class Cluster:
    def __init__(self, metadata, hosts):
        self.metadata = metadata
        self.endpoints_resolved = [h.endpoint for h in hosts]


class Statement:
    def __init__(self, keyspace, routing_key, truthy=True):
        self.keyspace, self.routing_key, self.truthy = keyspace, routing_key, truthy

    def __bool__(self):
        return self.truthy


plans = st.fixed_dictionaries({
    "hosts": st.lists(st.tuples(st.sampled_from(["dc1", "dc2", None]), st.booleans()), min_size=1, max_size=6),
    "local_dc": st.sampled_from(["dc1", "dc2", ""]),
    "remote": st.integers(0, 2),
    "replicas": st.lists(st.integers(0, 5), max_size=4),
    "query": st.one_of(st.none(), st.builds(Statement, st.sampled_from([None, "ks"]),
                                             st.sampled_from([None, b"key"]), st.booleans())),
    "working": st.sampled_from([None, "w"]),
    "shuffle": st.booleans(),
    "take": st.integers(0, 8),
    "position": st.integers(0, 10),
    "seed": st.integers(0, 2**16),
    "recording": st.booleans(),
})


def _policy(case):
    import random

    from cassandra.connection import DefaultEndPoint
    from cassandra.policies import DCAwareRoundRobinPolicy, SimpleConvictionPolicy, TokenAwarePolicy
    from cassandra.pool import Host

    hosts = []
    for i, (dc, up) in enumerate(case["hosts"]):
        host = Host(DefaultEndPoint(f"127.0.0.{i + 1}"), SimpleConvictionPolicy, datacenter=dc)
        host.set_up() if up else host.set_down()
        hosts.append(host)
    replicas = [hosts[i] for i in case["replicas"] if i < len(hosts)]
    metadata = Metadata(replicas)
    class Recording(DCAwareRoundRobinPolicy):
        """A child that is not exactly the driver's class: asked as it is, and what it is asked kept."""

        calls: list = []

        def make_query_plan(self, working_keyspace=None, query=None):
            self.calls.append(("plan", working_keyspace, id(query)))
            return super().make_query_plan(working_keyspace, query)

        def distance(self, host):
            self.calls.append(("distance", str(host.endpoint)))
            return super().distance(host)

    child = (Recording if case["recording"] else DCAwareRoundRobinPolicy)(case["local_dc"], case["remote"])
    child.calls = []
    policy = TokenAwarePolicy(child, case["shuffle"])
    random.seed(0)
    policy.populate(Cluster(metadata, hosts), hosts)
    policy._child_policy._position = case["position"]
    return policy, metadata


def _walk(plan, take):
    import random

    taken = []
    try:
        for _ in range(take):
            taken.append(str(next(plan).endpoint))
    except StopIteration:
        taken.append("end")
    except Exception as exc:  # noqa: BLE001 (the plan's own error, compared)
        taken.append(type(exc).__name__)
    return taken, random.random()


@settings(max_examples=1000)
@given(case=plans)
def test_query_plans_as_the_drivers(spec, case):
    """The same hosts in the same order as the driver's TokenAwarePolicy(DCAwareRoundRobinPolicy), the
    same calls on its metadata and the same round-robin position, however far the plan is walked."""
    import random

    seen = []
    for make in (spec.query_plan, lambda p, ks, q: iter(p.make_query_plan(ks, q))):
        policy, metadata = _policy(case)
        random.seed(case["seed"])
        plan = make(policy, case["working"], case["query"])
        assert metadata.asked == []  # nothing before the first host is asked for
        seen.append((_walk(plan, case["take"]), metadata.asked, policy._child_policy._position,
                     policy._child_policy.calls))
    assert seen[0] == seen[1]


def test_other_policies_plan_as_they_do(spec):
    from cassandra.policies import RoundRobinPolicy

    class Policy(RoundRobinPolicy):
        def make_query_plan(self, working_keyspace=None, query=None):
            return [working_keyspace, query]

    assert list(spec.query_plan(Policy(), "ks", "q")) == ["ks", "q"]


class OddToken(Token):
    """A token of another class in a Murmur3 ring: the ring is the driver's to search."""


class Value(int):
    """A token value that is not exactly an int: compared by the driver, with its own ``<``."""

    def __lt__(self, other):
        return int(self) > int(other)


rings = st.fixed_dictionaries({
    "values": st.lists(st.integers(MIN_LONG, MAX_LONG), min_size=0, max_size=12, unique=True),
    "keys": st.lists(st.one_of(st.binary(max_size=12), st.just(b"\x00"), st.text(max_size=3)), min_size=1, max_size=6),
    "keyspace": st.sampled_from(["ks", "other", None]),
    "built": st.booleans(),
    "lie": st.sampled_from([None, "token", "value", "ring", "map"]),
    "plain": st.booleans(),
})


def _token_map(case):
    from cassandra.connection import DefaultEndPoint
    from cassandra.metadata import Metadata, TokenMap
    from cassandra.policies import SimpleConvictionPolicy
    from cassandra.pool import Host

    metadata = Metadata()
    tokens = sorted(Murmur3Token(v) for v in case["values"])
    hosts = [Host(DefaultEndPoint(f"127.0.0.{i + 1}"), SimpleConvictionPolicy) for i in range(len(tokens))]
    token_map = TokenMap(Murmur3Token, dict(zip(tokens, hosts)), tokens, metadata)
    if case["built"]:
        token_map.tokens_to_hosts_by_ks["ks"] = {t: [h, hosts[0]] for t, h in zip(tokens, hosts)}
    if tokens and case["lie"] == "token":
        tokens[len(tokens) // 2] = OddToken(tokens[len(tokens) // 2].value)
    elif tokens and case["lie"] == "value":
        tokens[len(tokens) // 2].value = Value(tokens[len(tokens) // 2].value)
    elif case["lie"] == "ring":
        token_map.ring = tuple(tokens)
    elif case["lie"] == "map" and case["built"]:
        token_map.tokens_to_hosts_by_ks["ks"] = {t: (h,) for t, h in zip(tokens, hosts)}
    metadata.token_map = token_map if case["plain"] or tokens else None
    return metadata


@settings(max_examples=500)
@given(case=rings)
def test_replicas_as_the_drivers(spec, case):
    """The driver's own Metadata and Murmur3 token map: the same replicas (the same list object) or
    the same error as ``Metadata.get_replicas``, for any ring, key and keyspace, built or not, with
    tokens, values, rings and maps that are not the driver's types."""
    def outcome(get):
        metadata = _token_map(case)
        found = []
        for key in case["keys"]:
            try:
                found.append(get(metadata, key))
            except Exception as exc:  # noqa: BLE001 (the driver's own error, compared)
                found.append(type(exc).__name__)
        return found, metadata

    ours, ours_metadata = outcome(lambda m, key: spec.get_replicas(m, case["keyspace"], key))
    theirs, their_metadata = outcome(lambda m, key: m.get_replicas(case["keyspace"], key))
    assert [_hosts(r) for r in ours] == [_hosts(r) for r in theirs]
    if ours_metadata.token_map is not None:  # a map built by the call is built alike
        assert set(ours_metadata.token_map.tokens_to_hosts_by_ks) == set(their_metadata.token_map.tokens_to_hosts_by_ks)


def _hosts(found):
    return found if isinstance(found, str) else (type(found).__name__, [str(h.endpoint) for h in found])


def test_replicas_are_the_maps_own_list(spec):
    """Shuffling what it answers shuffles the map's list, as with the driver's (the policy relies on it)."""
    metadata = _token_map({"values": [-5, 7, 100], "built": True, "lie": None, "plain": True})
    lists = set(map(id, metadata.token_map.tokens_to_hosts_by_ks["ks"].values()))
    for key in (b"a", b"b", b"c", b"d"):
        found = spec.get_replicas(metadata, "ks", key)
        assert id(found) in lists and found is metadata.get_replicas("ks", key)


def _changed_classes():
    from cassandra.metadata import Metadata, TokenMap

    def value_negated(monkeypatch):
        monkeypatch.setattr(Murmur3Token, "value", property(
            lambda self: -self.__dict__["value"], lambda self, v: self.__dict__.__setitem__("value", v)),
            raising=False)

    theirs = ["theirs"]
    return {
        "a value property": value_negated,
        "Token.__lt__": lambda mp: mp.setattr(Token, "__lt__", lambda self, other: self.value > other.value),
        "Murmur3Token.__init__": lambda mp: mp.setattr(
            Murmur3Token, "__init__", lambda self, token: setattr(self, "value", token // 2)),
        "Murmur3Token.hash_fn": lambda mp: mp.setattr(Murmur3Token, "hash_fn", classmethod(lambda cls, key: 0)),
        "Murmur3Token.from_key": lambda mp: mp.setattr(
            Murmur3Token, "from_key", classmethod(lambda cls, key: cls(len(key) * 10 ** 17))),
        "TokenMap.get_replicas": lambda mp: mp.setattr(TokenMap, "get_replicas", lambda self, ks, token: theirs),
        "Metadata.get_replicas": lambda mp: mp.setattr(Metadata, "get_replicas", lambda self, ks, key: theirs),
    }


@pytest.mark.parametrize("change", sorted(_changed_classes()))
def test_a_changed_driver_class_is_searched_as_the_driver_searches(spec, monkeypatch, change):
    """A search method or the tokens' ``value`` replaced on the driver's classes after import: the
    same replicas as the driver's search, which calls them (no search of its own on the old ones)."""
    metadata = _token_map({"values": [n * 10 ** 18 for n in range(-9, 10, 2)], "built": True, "lie": None,
                           "plain": True})
    keys = [bytes([n]) * n for n in range(1, 13)]
    plain = [id(spec.get_replicas(metadata, "ks", key)) for key in keys]
    _changed_classes()[change](monkeypatch)
    theirs = [metadata.get_replicas("ks", key) for key in keys]
    ours = [spec.get_replicas(metadata, "ks", key) for key in keys]
    assert [id(found) for found in ours] == [id(found) for found in theirs]
    assert [id(found) for found in ours] != plain  # (the change changes the answer: the check could fail)
    monkeypatch.undo()
    assert [id(spec.get_replicas(metadata, "ks", key)) for key in keys] == plain


def test_replicas_of_a_built_murmur3_map_are_found_without_the_drivers_call(spec):
    """Only what it cannot search itself goes to ``Metadata.get_replicas`` (here: a keyspace not built)."""
    metadata = _token_map({"values": [-5, 7, 100], "built": True, "lie": None, "plain": True})
    asked = []
    drivers = metadata.get_replicas
    metadata.get_replicas = lambda keyspace, key: asked.append(keyspace) or drivers(keyspace, key)
    for key in (b"a", b"b", b"c", b"d"):
        spec.get_replicas(metadata, "ks", key)
    assert asked == []
    spec.get_replicas(metadata, "other", b"a")
    assert asked == ["other"]


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
def test_streams_return_to_the_pool_as_the_drivers(spec, case):
    trashed = case.pop("trashed", False)
    states = []
    for give_back in (spec.return_connection, lambda pool, conn: pool.return_connection(conn)):
        connection = Connection(**case)
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


@pytest.mark.parametrize("answer", ["void", "rows", "rows, warnings and payload", "failing factory"])
def test_answers_taken_as_the_drivers(spec, answer):
    from cassandra.protocol import RESULT_KIND_ROWS, RESULT_KIND_VOID


    def factory(names, rows):
        if answer == "failing factory":
            raise ValueError("no rows today")
        return [dict(zip(names, row)) for row in rows]

    outcomes = []
    for take in (spec.set_result, ResponseFuture._set_result):
        future = bare(Lean, spec.Once() if take is spec.set_result else threading.Event(), Metrics())
        future.message = type("Message", (), {"continuous_paging_options": None})()
        future.row_factory = factory
        response = {
            "void": lambda: _answer(RESULT_KIND_VOID),
            "rows": lambda: _answer(RESULT_KIND_ROWS, [(1, 2), (3, 4)], paging_state=b"p"),
            "rows, warnings and payload": lambda: _answer(RESULT_KIND_ROWS, [(5, 6)], warnings=["w"],
                                                          custom_payload={"k": b"v"}),
            "failing factory": lambda: _answer(RESULT_KIND_ROWS, [(1, 2)]),
        }[answer]()
        take(future, "host", None, None, response)
        exc = future._final_exception
        outcomes.append((future._final_result, type(exc), str(exc), future.coordinator_host, future._warnings,
                         future._custom_payload, future._paging_state, future._col_names, future._event.is_set()))
    assert outcomes[0] == outcomes[1]


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


@settings(max_examples=1000)
@given(data=st.one_of(st.binary(max_size=70), st.binary(min_size=1, max_size=40).map(lambda b: bytes(x | 0x80 for x in b))))
def test_murmur3_as_the_drivers(spec, data):
    """The partitioner's hash of any key, the last block's high bytes (read as signed) included."""
    from cassandra import metadata

    assert spec.murmur3(data) == metadata.murmur3(data)


def test_a_replaced_murmur3_is_the_one_called(spec, monkeypatch):
    from cassandra import metadata

    asked = []
    monkeypatch.setattr(metadata, "murmur3", lambda key: asked.append(key) or 0)
    assert spec.murmur3(b"key") == 0 and asked == [b"key"]
    ring = _token_map({"values": [-5, 7, 100], "built": True, "lie": None, "plain": True})
    assert spec.get_replicas(ring, "ks", b"other") is ring.get_replicas("ks", b"other")
    assert asked == [b"key", b"other", b"other"]
