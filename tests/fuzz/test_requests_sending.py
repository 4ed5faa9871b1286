"""Fuzz: sending a request in C (``pyfactories.futures._futures``) and its pure-Python twin against the driver:
a stream borrowed from ``HostConnection`` whose connection (the driver's, or with its attributes as fields, as
ours) holds lying numbers (comparisons and sums that run Python code and change the connection, freeing what was
compared), lying id queues and odd locks; and a session's ``execute_async``
(``LeanExecute``) whose request-init listeners add and remove listeners while they run, or raise."""

from __future__ import annotations

import collections
import threading

from cassandra.cluster import EXEC_PROFILE_DEFAULT, Session
from cassandra.connection import Connection
from cassandra.pool import HostConnection
from hypothesis import given
from hypothesis import strategies as st

from pyfactories.connection import _fields, _fields_py
from pyfactories.futures import _futures
from pyfactories.futures import _futures_py
from tests.futures.sessions import scripted_session
from tests.fuzz.conftest import fuzz

MODULES = {"compiled": _futures, "twin": _futures_py}
#: each implementation's connection with its attributes as fields, as pyfactories' connections have them
FIELDS = {_futures: type("FieldsConnection", (_fields.ConnectionFields, Connection), {}),
          _futures_py: type("FieldsConnection", (_fields_py.ConnectionFields, Connection), {})}


class Waited(Exception):
    """The pool's wait for a free stream (the driver's borrow would block for its timeout)."""


class Condition:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def wait(self, timeout=None):
        raise Waited


class Lying(int):
    """An int whose comparison or sum changes the connection it belongs to (once)."""

    conn = None
    act = "nothing"

    def _act(self):
        conn, self.__class__.conn = self.__class__.conn, None
        if conn is None:
            return
        if self.act == "new ids":
            conn.request_ids = collections.deque([99])
        elif self.act == "no ids":
            conn.request_ids = collections.deque()
        elif self.act == "raise":
            raise ArithmeticError("lying number")
        elif self.act == "replace":  # what is compared or added, replaced by equal objects: freed unless held
            conn.in_flight, conn.max_request_id = _fresh(conn.in_flight), _fresh(conn.max_request_id)
            return NotImplemented
        return None

    def __lt__(self, other):
        if self._act() is NotImplemented:
            return NotImplemented
        return int(self) < other

    def __add__(self, other):
        if self._act() is NotImplemented:
            return NotImplemented
        return int(self) + other


def _fresh(value):
    """A new object equal to ``value`` (so a comparison or sum made again gives what it gave)."""
    return value + 0.0 if isinstance(value, float) else int(str(int(value)))


class OddIds(collections.deque):
    def popleft(self):
        raise LookupError("odd ids")


class OddLock:
    def __init__(self):
        self.entered = 0

    def __enter__(self):
        self.entered += 1

    def __exit__(self, *exc):
        return False


cases = st.fixed_dictionaries({
    "in_flight": st.one_of(st.integers(-1, 4), st.sampled_from([2**70, 1.5, float("nan")])),
    "max_request_id": st.one_of(st.integers(0, 5), st.sampled_from([2**70, float("inf")])),
    "lying": st.sampled_from(["in_flight", "max_request_id", "highest", None]),
    "act": st.sampled_from(["nothing", "new ids", "no ids", "raise", "replace"]),
    "ids": st.sampled_from(["deque", "empty deque", "odd", "list"]),
    "highest": st.one_of(st.integers(-1, 4), st.just("x")),
    "lock": st.sampled_from(["rlock", "lock", "odd"]),
    "orphaned": st.booleans(), "closed": st.booleans(), "shut down": st.booleans(), "connection": st.booleans(),
    "fields": st.booleans(),
})


def _borrowed(borrow, case, cls=Connection):
    conn = cls.__new__(cls)
    values = {"in_flight": case["in_flight"], "max_request_id": case["max_request_id"], "highest": case["highest"]}
    values = {k: int(str(v)) if type(v) is int else v for k, v in values.items()}  # objects of their own
    if case["lying"] and isinstance(values[case["lying"]], int):
        lying = type("LyingNow", (Lying,), {"conn": conn, "act": case["act"]})
        values[case["lying"]] = lying(values[case["lying"]])
    conn.in_flight, conn.max_request_id, conn.highest_request_id = (
        values["in_flight"], values["max_request_id"], values["highest"])
    conn.request_ids = {"deque": collections.deque([3, 4]), "empty deque": collections.deque(), "odd": OddIds([1]),
                        "list": [5]}[case["ids"]]
    conn.lock = {"rlock": threading.RLock(), "lock": threading.Lock(), "odd": OddLock()}[case["lock"]]
    conn.orphaned_threshold_reached, conn.is_closed = case["orphaned"], case["closed"]
    pool = HostConnection.__new__(HostConnection)
    pool.host, pool.is_shutdown, pool._is_replacing = "host", case["shut down"], True
    pool._connection = conn if case["connection"] else None
    pool._lock, pool._stream_available_condition = threading.Lock(), Condition()
    try:
        got = borrow(pool)
        answer = ("lent", got[0] is conn, repr(got[1]))
    except Exception as exc:
        answer = ("raised", type(exc).__name__)
    held = conn.lock._is_owned() if case["lock"] == "rlock" else (
        conn.lock.locked() if case["lock"] == "lock" else None)
    ids = list(conn.request_ids) if isinstance(conn.request_ids, (list, collections.deque)) else None
    return answer, repr(conn.in_flight), ids, repr(conn.highest_request_id), held


@fuzz
@given(case=cases)
def test_requests_borrow_connection_as_the_pools(case):
    driver = _borrowed(lambda pool: pool.borrow_connection(2.0), case)
    for module in MODULES.values():
        cls = FIELDS[module] if case["fields"] else Connection  # the connection's attributes as fields (ours)
        assert _borrowed(module.borrow_connection, case, cls) == driver, case


# A session's execute_async ----------------------------------------------------------------------

listener_kinds = st.lists(st.sampled_from(["plain", "adds", "removes", "raises", "args"]), max_size=4)


def _session(kinds, send, created):
    made = scripted_session(send == "raise", created)

    def listener(kind):
        def listen(future, *args, **kwargs):
            made.log.append(("listener", kind, args, kwargs))
            if kind == "adds":
                made.add_request_init_listener(listener("plain"))
            elif kind == "removes" and made._request_init_callbacks:
                made._request_init_callbacks.pop(0)
            elif kind == "raises":
                raise KeyError("listener")
        return listen

    for kind in kinds:
        if kind == "args":
            made.add_request_init_listener(listener(kind), 1, k=2)
        else:
            made.add_request_init_listener(listener(kind))
    return made


def _executed(execute_of, kinds, send, created, execute_as):
    made = _session(kinds, send, created)
    try:
        future = execute_of(made)("SELECT 1", (1,), False, None, 1.0, EXEC_PROFILE_DEFAULT, None, None, execute_as)
        answer = ("future", type(future).__name__)
    except Exception as exc:
        answer = ("raised", type(exc).__name__, str(exc))
    return answer, [entry if entry[0] != "listener" else entry[:2] + (entry[2], entry[3]) for entry in made.log]


@fuzz
@given(kinds=listener_kinds, send=st.sampled_from(["ok", "raise"]),
       created=st.sampled_from(["future", "raise", "not a future"]), execute_as=st.sampled_from([None, "bob"]))
def test_requests_execute_async_with_listeners_that_change_them(kinds, send, created, execute_as):
    driver = _executed(lambda s: lambda *a: Session.execute_async(s, *a), kinds, send, created, execute_as)
    for module in MODULES.values():
        assert _executed(module.LeanExecute, kinds, send, created, execute_as) == driver, (kinds, send, created)
