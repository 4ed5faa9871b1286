"""Fuzz: the leaner futures' compiled parts (``pyfactories.futures._futures``) and their pure-Python twin
(``pyfactories.futures._futures_py``) against the driver: ``Once`` against ``threading.Event``, the callback
methods against ``ResponseFuture``'s with callbacks that re-enter (add callbacks, clear or replace the
lists, set the result again, change a later callback's arguments, raise), the token-aware query plan
against ``TokenAwarePolicy.make_query_plan`` with hosts that change the plan's lists as it runs, the replicas
against ``Metadata.get_replicas`` with map keys that change the ring and the map while they are compared, and the
client timestamp against ``MonotonicTimestampGenerator`` whose ``last`` was set from Python."""

from __future__ import annotations

import threading
import time

from cassandra.cluster import ResponseFuture
from cassandra.connection import DefaultEndPoint
from cassandra.metadata import MAX_LONG, MIN_LONG, Murmur3Token, Token, TokenMap
from cassandra.metadata import Metadata as DriverMetadata
from cassandra.policies import DCAwareRoundRobinPolicy, SimpleConvictionPolicy, TokenAwarePolicy
from cassandra.pool import Host
from cassandra.timestamps import MonotonicTimestampGenerator
from hypothesis import given
from hypothesis import strategies as st

from pyfactories.futures import _futures
from pyfactories.futures import _futures_py
from tests.fuzz.conftest import fuzz

MODULES = {"compiled": _futures, "twin": _futures_py}

# Once -------------------------------------------------------------------------------------------

timeouts = st.sampled_from([None, 0, -1, 1e-4, float("nan"), float("-inf"), 1e300, 2**100, "x", 0.0])
once_ops = st.lists(st.one_of(st.sampled_from(["set", "clear", "is_set"]), st.tuples(st.just("wait"), timeouts)),
                    max_size=25)


def _once_op(event, op):
    try:
        if op == "set":
            return event.set()
        if op == "clear":
            return event.clear()
        if op == "is_set":
            return event.is_set()
        timeout = op[1]
        if timeout is None and not event.is_set():
            return "would block"  # (a wait without a timeout on an unset event never returns)
        return event.wait(timeout)
    except Exception as exc:
        return type(exc)


@fuzz
@given(ops=once_ops)
def test_requests_once_as_threading_event(ops):
    events = {"driver": threading.Event(), **{name: module.Once() for name, module in MODULES.items()}}
    for op in ops:
        answers = {name: _once_op(event, op) for name, event in events.items()}
        assert answers["compiled"] == answers["driver"], (op, answers)
        assert answers["twin"] == answers["driver"], (op, answers)


# Callbacks ---------------------------------------------------------------------------------------


class Timer:
    def cancel(self):
        pass


def _future(cls):
    future = cls.__new__(cls)
    future._callback_lock = threading.Lock()
    future._callbacks, future._errbacks = [], []
    future._event = threading.Event()
    future._timer = Timer()
    future._metrics = None
    future._start_time = time.time()
    return future


def _future_class(name):
    if name == "driver":
        return ResponseFuture
    module = MODULES[name]
    return type("Ours", (module.FutureFields, ResponseFuture), {
        "_set_final_result": module.set_final_result, "_set_final_exception": module.set_final_exception,
        "add_callback": module.add_callback, "add_errback": module.add_errback,
        "add_callbacks": module.add_callbacks,
    })


ACTIONS = ["nothing", "add_callback", "add_errback", "add_callbacks", "clear", "replace", "set_again",
           "fail_again", "change_later", "append_junk", "raise", "append_pairs"]
listener = st.tuples(st.sampled_from(ACTIONS), st.lists(st.integers(0, 3), max_size=2),
                     st.dictionaries(st.sampled_from(["k", "m"]), st.integers(0, 3), max_size=2))


def _run_callbacks(name, plan, outcome, late, together=False):
    """Add the listeners of ``plan`` to a future, finish it with ``outcome``, add ``late`` ones (a callback
    and an errback each, ``together`` by one ``add_callbacks``): what each listener saw, in order, and the
    future's state after."""
    future = _future(_future_class(name))
    log = []

    def make(tag, action):
        acted = []

        def listener(response, *args, **kwargs):
            log.append((tag, repr(response), args, dict(kwargs)))
            if acted:  # each listener acts the first time it is called only
                return
            acted.append(True)
            if action == "add_callback":
                future.add_callback(make(tag + ".cb", "nothing"), tag)
            elif action == "add_errback":
                future.add_errback(make(tag + ".eb", "nothing"), tag)
            elif action == "add_callbacks":
                future.add_callbacks(make(tag + ".cb2", "nothing"), make(tag + ".eb2", "nothing"),
                                     callback_args=(1,), errback_kwargs={"z": 2})
            elif action == "clear":
                future._callbacks.clear()
                future._errbacks.clear()
            elif action == "replace":
                future._callbacks, future._errbacks = [], []
            elif action == "set_again":
                future._set_final_result("again")
            elif action == "fail_again":
                future._set_final_exception(KeyError("again"))
            elif action == "change_later":
                for items in (future._callbacks, future._errbacks):
                    for item in items:
                        if item[2] is not None and hasattr(item[2], "update"):
                            item[2].update(changed=True)
            elif action == "append_junk":
                future._callbacks.append((make(tag + ".junk", "nothing"), "ab", {}))
            elif action == "append_pairs":
                future._errbacks.append((make(tag + ".pairs", "nothing"), (), [("p", 1)]))
            elif action == "raise":
                raise ZeroDivisionError(tag)
        return listener

    for i, (action, args, kwargs) in enumerate(plan):
        if i % 2:
            future.add_errback(make(f"e{i}", action), *args, **kwargs)
        else:
            future.add_callback(make(f"c{i}", action), *args, **kwargs)
    try:
        if outcome == "result":
            future._set_final_result(["row"])
        else:
            future._set_final_exception(ValueError("boom"))
    except Exception as exc:
        log.append(("finish error", type(exc).__name__))
    for i, (action, args, kwargs) in enumerate(late):
        try:
            if together:
                future.add_callbacks(make(f"late{i}", action), make(f"late_e{i}", action), callback_args=args,
                                     callback_kwargs=kwargs)
            else:
                future.add_callback(make(f"late{i}", action), *args, **kwargs)
                future.add_errback(make(f"late_e{i}", action))
        except Exception as exc:
            log.append(("late error", type(exc).__name__))
    return log, repr(future._final_result), repr(future._final_exception), future._event.is_set()


@fuzz
@given(plan=st.lists(listener, max_size=5), late=st.lists(listener, max_size=2),
       outcome=st.sampled_from(["result", "exception"]))
def test_requests_callbacks_that_reenter_as_the_drivers(plan, late, outcome):
    found = {name: _run_callbacks(name, plan, outcome, late) for name in ("driver", *MODULES)}
    assert found["compiled"] == found["driver"]
    assert found["twin"] == found["driver"]
    # add_callbacks adds both in one turn of the lock (the driver's, in two): a listener that finishes the
    # future again sees them in another order than the driver's, the same as the twin's
    assert _run_callbacks("compiled", plan, outcome, late, True) == _run_callbacks("twin", plan, outcome, late, True)


# The token-aware query plan ------------------------------------------------------------------------


class Hooked(Host):
    """A host whose ``is_up`` runs the walk's hook (that changes the plan's lists, asks the plan again...)."""

    hook = None

    @property
    def is_up(self):
        hook = Hooked.hook
        if hook is not None:
            hook(self)
        return self._up

    @is_up.setter
    def is_up(self, value):
        self._up = value


class Statement:
    def __init__(self, keyspace, routing_key):
        self.keyspace, self.routing_key = keyspace, routing_key


class Metadata:
    def __init__(self, replicas, container):
        self.replicas, self.container = replicas, container

    def get_replicas(self, keyspace, key):
        return self.container(self.replicas)


HOOKS = ["none", "pop replica", "clear replicas", "append replica", "drop live dc", "shrink live dc",
         "reenter", "raise", "move position", "down"]
plans = st.fixed_dictionaries({
    "hosts": st.lists(st.tuples(st.sampled_from(["dc1", "dc2", None]), st.booleans()), min_size=1, max_size=5),
    "local_dc": st.sampled_from(["dc1", "dc2"]),
    "remote": st.integers(0, 2),
    "replicas": st.lists(st.integers(0, 4), max_size=4),
    "container": st.sampled_from(["list", "tuple", "set", "iterator"]),
    "hook": st.sampled_from(HOOKS),
    "after": st.integers(0, 4),
    "query": st.sampled_from(["routed", "no key", "none"]),
    "take": st.integers(0, 9),
})


def _walk_plan(name, case):
    hosts = []
    for i, (dc, up) in enumerate(case["hosts"]):
        host = Hooked(DefaultEndPoint(f"127.0.0.{i + 1}"), SimpleConvictionPolicy, datacenter=dc)
        host._up = up
        hosts.append(host)
    child = DCAwareRoundRobinPolicy(case["local_dc"], case["remote"])
    child.populate(None, hosts)
    child._position = 0
    policy = TokenAwarePolicy(child, shuffle_replicas=False)
    replicas = [hosts[i] for i in case["replicas"] if i < len(hosts)]
    if case["container"] == "set":  # a set's order is its own: the one set, asked once a walk
        def container(found):
            return set(found)
    else:
        container = {"list": list, "tuple": tuple, "iterator": iter}[case["container"]]
    policy._cluster_metadata = Metadata(replicas, container)
    query = {"routed": Statement("ks", b"key"), "no key": Statement("ks", None), "none": None}[case["query"]]
    if name == "driver":
        plan = iter(policy.make_query_plan("ks", query))
    else:
        plan = MODULES[name].query_plan(policy, "ks", query)
    calls = [0]

    def hook(host):
        calls[0] += 1
        if calls[0] != case["after"] + 1:
            return
        what = case["hook"]
        if what == "pop replica" and replicas:
            replicas.pop()
        elif what == "clear replicas":
            replicas.clear()
        elif what == "append replica":
            replicas.append(hosts[0])
        elif what == "drop live dc":
            child._dc_live_hosts.pop(case["local_dc"], None)
        elif what == "shrink live dc":
            live = child._dc_live_hosts.get(host.datacenter or case["local_dc"])
            if live:
                child._dc_live_hosts[host.datacenter or case["local_dc"]] = live[1:]
        elif what == "reenter":
            next(plan)
        elif what == "raise":
            raise KeyError("is_up")
        elif what == "move position":
            child._position = 10**6
        elif what == "down":
            host._up = False

    Hooked.hook = hook
    taken = []
    try:
        for _ in range(case["take"]):
            try:
                taken.append(str(next(plan).endpoint))
            except StopIteration:
                taken.append("end")
            except Exception as exc:  # the plan's own error, compared
                taken.append(type(exc).__name__)
    finally:
        Hooked.hook = None
    return taken, child._position, [str(h.endpoint) for h in replicas]


@fuzz
@given(case=plans)
def test_requests_token_aware_plans_with_hosts_that_change_them(case):
    found = {name: _walk_plan(name, case) for name in ("driver", *MODULES)}
    assert found["compiled"] == found["driver"], case
    assert found["twin"] == found["driver"], case


# Replicas ----------------------------------------------------------------------------------------


class Collider(Token):
    """A key of the token map with a ring token's hash: comparing it (during the map's lookup) empties
    the ring and the map, or puts other tokens in them."""

    action = "clear"

    def __eq__(self, other):
        ring, by_token = self.ring, self.by_token
        if self.action is None:
            return False
        if self.action == "clear":
            ring.clear()
            by_token.clear()
        else:
            ring[:] = [Murmur3Token(v) for v in range(-3, 3)]
            self.action = None  # once: the refill compares its own tokens with this one
            by_token.update({t: [] for t in ring})
        return False

    __hash__ = Token.__hash__


rings = st.fixed_dictionaries({
    "values": st.lists(st.integers(MIN_LONG, MAX_LONG), max_size=10, unique=True),
    "keys": st.lists(st.one_of(st.binary(max_size=9), st.just(b"")), min_size=1, max_size=4),
    "colliders": st.lists(st.tuples(st.integers(0, 9), st.sampled_from(["clear", "refill"])), max_size=3),
})


def _replicas(get, case):
    tokens = sorted(Murmur3Token(v) for v in case["values"])
    hosts = [Host(DefaultEndPoint(f"127.0.0.{i + 1}"), SimpleConvictionPolicy) for i in range(len(tokens))]
    metadata = DriverMetadata()
    metadata.token_map = TokenMap(Murmur3Token, dict(zip(tokens, hosts)), tokens, metadata)
    by_token = {}
    for at, action in case["colliders"]:  # first: a lookup of the ring's token compares them on its way
        if at < len(tokens):
            collider = Collider(tokens[at].value)
            collider.ring, collider.by_token, collider.action = tokens, by_token, action
            by_token[collider] = ["collider"]
    by_token.update({t: [h] for t, h in zip(tokens, hosts)})
    metadata.token_map.tokens_to_hosts_by_ks["ks"] = by_token
    found = []
    for key in case["keys"]:
        try:
            found.append([str(getattr(h, "endpoint", h)) for h in get(metadata, key)])
        except Exception as exc:  # the driver's own error, compared
            found.append(type(exc).__name__)
    return found, [t.value for t in tokens]


@fuzz
@given(case=rings)
def test_requests_replicas_with_keys_that_change_the_ring(case):
    found = {"driver": _replicas(lambda m, key: m.get_replicas("ks", key), case)}
    for name, module in MODULES.items():
        found[name] = _replicas(lambda m, key: module.get_replicas(m, "ks", key), case)
    assert found["compiled"] == found["driver"], case
    assert found["twin"] == found["driver"], case


# Timestamps --------------------------------------------------------------------------------------


class NeverBehind(int):
    """A ``last`` that says the clock is never past it (``now > last`` asks its ``__lt__``)."""

    def __gt__(self, other):
        return True

    def __lt__(self, other):
        return False


lasts = st.one_of(
    st.floats(min_value=1e17, allow_nan=False), st.integers(10**17, 10**40), st.builds(NeverBehind, st.integers(0, 9)),
    st.sampled_from([float("inf"), float("nan"), -1.5, "x", None, 2**63, 2**64 + 0.5]),
)


def _stamp(stamp, last, own):
    generator = MonotonicTimestampGenerator(warn_on_drift=False)
    generator.last = last
    if own:
        generator._next_timestamp = lambda now, last: ("own", last)
    try:
        value = stamp(generator)
    except Exception as exc:
        return "error", type(exc)
    # what depends on the clock is not compared: a value from it, when ``last`` is not ahead of it
    ahead = own or isinstance(last, NeverBehind) or (isinstance(last, (int, float)) and last == last
                                                       and last > time.time() * 1e6 + 1e9)
    return type(value), value if ahead else None, type(generator.last), generator.last if ahead else None


@fuzz
@given(last=lasts, own=st.booleans())
def test_requests_timestamps_as_the_drivers(last, own):
    driver = _stamp(lambda g: g(), last, own)
    for module in MODULES.values():
        ours = _stamp(module.timestamp, last, own)
        if ours != driver and isinstance(last, float) and last != last:  # nan: != itself, compared by kind
            assert repr(ours) == repr(driver)
            continue
        assert ours == driver, (last, own)


# Returning a connection to its pool ---------------------------------------------------------------


class Connection:
    """What ``HostConnection.return_connection`` reads of a connection."""

    def __init__(self, in_flight, orphaned, defunct, closed, signaled):
        self.lock = threading.Lock()
        self.in_flight, self.orphaned_request_ids = in_flight, set(range(orphaned))
        self.is_defunct, self.is_closed, self.signaled_error = defunct, closed, signaled
        self.last_error, self.closed_by_pool = None, 0

    def close(self):
        self.closed_by_pool += 1


class Session:
    def __init__(self):
        self.submitted = []
        self.cluster = self

    def signal_connection_failure(self, host, error, is_host_addition):
        return False

    def submit(self, fn, *args):
        self.submitted.append(fn.__name__)


class OddCondition:
    """Not the driver's Condition (a stand-in Python put there): the pool's own method is called."""

    def __init__(self):
        self.notified = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def notify(self):
        self.notified += 1


connections = st.fixed_dictionaries({
    "in_flight": st.one_of(st.integers(-2, 3), st.sampled_from([2**70, 1.5, float("nan")])),
    "orphaned": st.integers(0, 3),
    "defunct": st.booleans(), "closed": st.booleans(), "signaled": st.booleans(),
    "trash": st.sampled_from(["set with it", "empty set", "list with it", "tuple"]),
    "condition": st.sampled_from(["driver's", "odd"]),
    "waiter": st.booleans(),
    "shutdown_on_error": st.booleans(),
})


def _returned(return_connection, case):
    from cassandra.pool import HostConnection

    pool = HostConnection.__new__(HostConnection)
    connection = Connection(case["in_flight"], case["orphaned"], case["defunct"], case["closed"], case["signaled"])
    pool.host, pool._session, pool._lock, pool._connection = "host", Session(), threading.Lock(), connection
    pool._is_replacing, pool.shutdown_on_error, pool.is_shutdown = False, case["shutdown_on_error"], False
    pool.shutdown = lambda: pool._session.submitted.append("shutdown")
    pool._trash = {"set with it": {connection}, "empty set": set(), "list with it": [connection], "tuple": ()}[
        case["trash"]]
    condition = threading.Condition() if case["condition"] == "driver's" else OddCondition()
    if case["waiter"] and case["condition"] == "driver's":
        waiter = threading.Lock()
        waiter.acquire()
        condition._waiters.append(waiter)  # a waiting thread's lock, released by the notify
    pool._stream_available_condition = condition
    try:
        return_connection(pool, connection)
        error = None
    except Exception as exc:
        error = type(exc)
    return (error, repr(connection.in_flight), connection.closed_by_pool, connection.signaled_error,
            [item is connection for item in pool._trash], pool._session.submitted,
            pool._connection is connection, len(getattr(condition, "_waiters", ())),
            getattr(condition, "notified", None))


@fuzz
@given(case=connections)
def test_requests_return_connection_as_the_pools(case):
    driver = _returned(lambda pool, connection: pool.return_connection(connection), case)
    for module in MODULES.values():
        assert _returned(module.return_connection, case) == driver, case
