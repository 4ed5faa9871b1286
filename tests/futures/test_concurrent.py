"""``execute_concurrent`` with its results as a list, compiled (``c``) and pure Python (``py``), against the
driver's own ``ConcurrentExecutorListResults`` on the same scripted session: the same requests in the same
order, the same calls on the futures, the same results or the same error raised; and the routing that sends
only the sessions with the leaner futures to it. The server's side is in tests/integration/test_futures.py."""

from __future__ import annotations

import gc
import importlib
import queue
import subprocess
import sys
import threading
import weakref

import pytest
from cassandra import concurrent
from cassandra.cluster import _NOT_SET, ResultSet
from cassandra.concurrent import ExecutionResult
from hypothesis import given, settings
from hypothesis import strategies as st

from pyfactories import futures

MODULES = {"c": "pyfactories.futures._futures", "py": "pyfactories.futures._futures_py"}
DRIVERS = concurrent.ConcurrentExecutorListResults  # the driver's own class
PROFILE = object()


@pytest.fixture(scope="module", params=sorted(MODULES), ids=sorted(MODULES))
def spec(request):
    return importlib.import_module(MODULES[request.param])


class Failed(Exception):
    """An error a request ends with (or ``execute_async`` raises), compared by its text."""

    def __eq__(self, other):
        return type(other) is Failed and other.args == self.args

    __hash__ = Exception.__hash__


class Falsy(Failed):
    """An error whose truth is False: the driver keeps looking for the first one that is true."""

    def __bool__(self):
        return False


class Future:
    """A request's future: completes at once (``now``), or later on the session's IO thread."""

    _col_names = ["v"]
    _col_types = [None]
    has_more_pages = False

    def __init__(self, session, outcome):
        self.session, self.outcome = session, outcome

    def add_callbacks(self, callback, errback, callback_args=(), callback_kwargs=None, errback_args=(),
                      errback_kwargs=None):
        self.session.log.append(("add_callbacks", callback_args[1], errback_args[1], callback_kwargs, errback_kwargs))
        kind, value = self.outcome
        done = (callback, value, callback_args) if kind == "ok" else (errback, value, errback_args)
        if self.session.now:
            done[0](done[1], *done[2])
        else:
            self.session.io.put(done)

    def clear_callbacks(self):
        self.session.log.append(("clear_callbacks", self.outcome))


class Session:
    """Answers each statement as its script says: ``ok`` rows, an ``error`` the future ends with, or an
    exception ``raise`` d by ``execute_async``; ``submit`` runs on a thread of its own, as the driver's."""

    def __init__(self, now):
        self.now, self.log, self.io = now, [], queue.SimpleQueue()
        self.thread = threading.Thread(target=self._io, daemon=True)
        self.thread.start()
        self.submitted = []

    def _io(self):
        while (done := self.io.get()) is not None:
            done[0](done[1], *done[2])

    def execute_async(self, statement, params, execution_profile=None, timeout=_NOT_SET):
        self.log.append(("execute_async", statement, params, execution_profile, timeout))
        kind, value = params
        if kind == "raise":
            raise value
        return Future(self, params)

    def submit(self, fn, *args):
        self.log.append(("submit", args[1]))
        thread = threading.Thread(target=fn, args=args)
        self.submitted.append(thread)
        thread.start()

    def close(self):
        self.io.put(None)
        self.thread.join(10)
        for thread in self.submitted:
            thread.join(10)


def _outcome(results):
    return [(r.success, list(r.result_or_exc) if isinstance(r.result_or_exc, ResultSet) else r.result_or_exc)
            for r in results]


def run(executor_class, script, concurrency, fail_fast, now):
    """What ``execute_concurrent`` answers (or raises) with ``executor_class``, and the session's log."""
    session = Session(now)
    try:
        statements = [(f"statement {i}", step) for i, step in enumerate(script)]
        executor = executor_class(session, iter(statements), PROFILE)
        try:
            answer = ("results", _outcome(executor.execute(concurrency, fail_fast)))
        except Exception as exc:  # noqa: BLE001 (the driver's error, compared)
            answer = ("raised", exc)
    finally:
        session.close()
    return answer, session.log


steps = st.one_of(
    st.builds(lambda n: ("ok", [(n,)]), st.integers(0, 99)),
    st.builds(lambda n: ("error", Failed(n)), st.integers(0, 9)),
    st.builds(lambda n: ("error", Falsy(n)), st.integers(0, 9)),
    st.builds(lambda n: ("raise", Failed(f"raised {n}")), st.integers(0, 9)),
)


@settings(max_examples=300, deadline=None)
@given(script=st.lists(steps, max_size=25), concurrency=st.integers(1, 6), fail_fast=st.booleans(),
       now=st.booleans())
def test_the_same_requests_and_results_as_the_drivers(spec, script, concurrency, fail_fast, now):
    theirs, their_log = run(DRIVERS, script, concurrency, fail_fast, now)
    ours, our_log = run(spec.ListResults, script, concurrency, fail_fast, now)
    assert ours == theirs
    if now:
        assert our_log == their_log
    elif not fail_fast:  # (failing fast, what is sent after the error depends on the threads' timing)
        # the same requests and calls on their futures; their order across the two threads (the caller's,
        # sending the first requests, and the IO thread's, ending them and sending the next) is timing's
        assert sorted(map(repr, our_log)) == sorted(map(repr, their_log))


@pytest.mark.parametrize("now", [True, False], ids=["at-once", "later"])
def test_a_long_chain_of_requests_that_raise_goes_on_as_the_drivers(spec, now):
    """Every ``execute_async`` raises: on cassandra-driver, past its recursion limit the next one is handed
    to ``session.submit``; scylla-driver's executor queues them (``QUEUED``) and sends them all itself,
    with no client timeout. Every result still arrives in its place."""
    assert spec.QUEUED is (not hasattr(DRIVERS, "max_error_recursion"))
    script = [("raise", Failed(i)) for i in range(300)] + [("ok", [(1,)])]
    theirs, their_log = run(DRIVERS, script, 1, False, now)
    ours, our_log = run(spec.ListResults, script, 1, False, now)
    assert ours == theirs and our_log == their_log
    assert any(entry[0] == "submit" for entry in our_log) is (not spec.QUEUED)
    timeouts = {entry[-1] for entry in our_log if entry[0] == "execute_async"}
    assert timeouts == ({None} if spec.QUEUED else {_NOT_SET})
    assert ours[1][-1] == (True, [(1,)]) and len(ours[1]) == len(script)


@pytest.mark.parametrize("fail_fast", [False, True], ids=["all", "fail-fast"])
@pytest.mark.parametrize("now", [True, False], ids=["at-once", "later"])
def test_results_are_freed_with_their_last_reference_as_the_drivers(spec, now, fail_fast):
    """Once every request has finished, the executor lets its listeners go: the results hold no cycle through
    it, and are freed when the caller lets them go, without the cyclic collector (as the driver's are)."""
    freed = {}
    gc.disable()
    try:
        for executor_class in (DRIVERS, spec.ListResults):
            session = Session(now)
            script = [(f"statement {i}", ("ok", [(i,)])) for i in range(20)]
            try:
                results = executor_class(session, iter(script), PROFILE).execute(3, fail_fast)
            finally:
                session.close()  # (its IO thread's last callback let go)
            kept = weakref.ref(results[-1].result_or_exc)
            del results
            freed[executor_class] = kept() is None
    finally:
        gc.enable()
    assert freed == {DRIVERS: True, spec.ListResults: True}


class Resumed:
    """Statements that go on after their end: one, the end, then one more."""

    def __init__(self):
        self.steps = [("first", ("ok", [(1,)])), None, ("second", ("ok", [(2,)]))]

    def __iter__(self):
        return self

    def __next__(self):
        step = self.steps.pop(0) if self.steps else None
        if step is None:
            raise StopIteration
        return step


class Again(Future):
    """A future whose listener the test calls once more, after the executor has finished."""

    def add_callbacks(self, callback, errback, callback_args=(), callback_kwargs=None, errback_args=(),
                      errback_kwargs=None):
        self.session.again.append((callback, self.outcome[1], callback_args))
        super().add_callbacks(callback, errback, callback_args, callback_kwargs, errback_args, errback_kwargs)


class AgainSession(Session):
    def __init__(self):
        super().__init__(True)
        self.again = []

    def execute_async(self, statement, params, execution_profile=None, timeout=_NOT_SET):
        super().execute_async(statement, params, execution_profile, timeout)  # (logged; raises as scripted)
        return Again(self, params)


def test_a_request_finishing_again_after_the_end_sends_as_the_drivers(spec):
    """A future that calls its listener a second time, after every request finished, while the statements
    go on after their end: the driver's executor sends the next statement with its listeners, and so does
    ours (made again, having let them go)."""
    logs = []
    for executor_class in (DRIVERS, spec.ListResults):
        session = AgainSession()
        try:
            executor = executor_class(session, Resumed(), PROFILE)
            first = _outcome(executor.execute(1, False))
            callback, value, args = session.again[0]
            callback(value, *args)
        finally:
            session.close()
        logs.append((first, session.log, len(session.again)))
    assert logs[1] == logs[0]
    assert logs[0][2] == 2  # the second statement was sent, its listener added


class Reentering(Session):
    """Its second ``execute_async`` runs the executor it was handed (a listener's ``__self__``) once more,
    inside the send: that call runs to its end and lets the executor's listeners go."""

    def __init__(self, reenters):
        super().__init__(True)
        self.executor, self.inner, self.reenters = None, None, reenters

    def execute_async(self, statement, params, execution_profile=None, timeout=_NOT_SET):
        if self.reenters and len([entry for entry in self.log if entry[0] == "execute_async"]) == 1:
            self.inner = _outcome(self.executor.execute(1, False))
        return super().execute_async(statement, params, execution_profile, timeout)

class Grabbing(Future):
    def add_callbacks(self, callback, errback, **kwargs):
        self.session.executor = getattr(callback, "__self__", None)
        super().add_callbacks(callback, errback, **kwargs)


def test_a_send_that_runs_the_executor_to_its_end_still_adds_its_listeners(spec, monkeypatch):
    """Python code sending a request (a session's own ``execute_async``) that runs the same executor again
    to its end: the request being sent still gets the executor's listeners, as with the driver's. (Where the
    executor queues what is started during a send, scylla-driver's, such a call would wait for the send it
    is in, with the driver's executor as with ours: there the sends are not re-entered.)"""
    monkeypatch.setattr(sys.modules[__name__], "Future", Grabbing)
    answers = []
    for executor_class in (DRIVERS, spec.ListResults):
        session = Reentering(reenters=not spec.QUEUED)
        try:
            script = [(f"statement {i}", ("ok", [(i,)])) for i in range(3)]
            answers.append((_outcome(executor_class(session, iter(script), PROFILE).execute(1, False)),
                            session.inner))
        finally:
            session.close()
    assert answers[1] == answers[0] and (answers[0][1] is None) is spec.QUEUED
    assert all(ok for ok, _ in answers[0][0] + (answers[0][1] or []))  # (no listener left out: none failed)


def test_results_are_the_drivers_types(spec):
    answer = spec.ListResults(Session(True), iter([("s", ("ok", [(1,)])), ("s", ("error", Failed(2)))]), PROFILE)
    results = answer.execute(2, False)
    assert [type(r) for r in results] == [ExecutionResult, ExecutionResult]
    assert type(results[0].result_or_exc) is ResultSet and results[1] == (False, Failed(2))


def test_a_replaced_execution_result_is_called_as_the_driver_calls_it(spec, monkeypatch):
    made = []

    class Mine(ExecutionResult):
        def __new__(cls, success, result_or_exc):
            made.append(success)
            return super().__new__(cls, success, result_or_exc)

    monkeypatch.setattr(concurrent, "ExecutionResult", Mine)
    results = spec.ListResults(Session(True), iter([("s", ("ok", [(1,)])), ("s", ("error", Failed(2)))]),
                               PROFILE).execute(1, False)
    assert made == [True, False] and [type(r) for r in results] == [Mine, Mine]
    monkeypatch.setattr(ExecutionResult, "__new__", lambda cls, success, result: ("replaced", success))
    monkeypatch.setattr(concurrent, "ExecutionResult", ExecutionResult)
    assert spec.ListResults(Session(True), iter([("s", ("ok", [(1,)]))]), PROFILE).execute(1, False) == [
        ("replaced", True)]


def test_statements_that_are_not_pairs_raise_as_the_drivers(spec):
    """The same error (the same text too where both are compiled: the interpreter words it otherwise)."""
    for bad in ([("s", ("ok", []), "extra")], [None]):
        errors = []
        for executor in (DRIVERS, spec.ListResults):
            with pytest.raises(Exception) as raised:
                executor(Session(True), iter(bad), PROFILE).execute(2, True)
            errors.append((type(raised.value), str(raised.value)))
        assert errors[0][0] == errors[1][0]
        if spec.__name__ == MODULES["c"]:
            assert errors[0] == errors[1]


class Counting:
    """``execute_concurrent``'s ways, counted: ours (the executor) or the driver's function."""

    def __init__(self, monkeypatch, spec):
        self.ours = self.drivers = 0
        made, drivers = spec.ListResults, futures.DRIVERS_EXECUTE_CONCURRENT

        def ours(*args):
            self.ours += 1
            return made(*args)

        def driver(*args):
            self.drivers += 1
            return drivers(*args)

        monkeypatch.setattr(futures._spec, "ListResults", ours)
        monkeypatch.setattr(futures, "DRIVERS_EXECUTE_CONCURRENT", driver)


def test_only_lists_of_sessions_with_the_leaner_futures_are_ours(monkeypatch):
    """The function put in ``cassandra.concurrent``: ours for a session with the leaner futures and the
    results as a list; the driver's for any other session, for a generator of results, and for an
    object that is not a session at all (with the driver's errors)."""
    monkeypatch.setattr(futures, "is_installed", lambda session: session.lean)
    count = Counting(monkeypatch, futures._spec)
    lean, plain = Session(True), Session(True)
    lean.lean, plain.lean = True, False
    statements = [("s", ("ok", [(1,)])), ("s", ("error", Failed(2)))]
    for session in (lean, plain):
        assert _outcome(futures.execute_concurrent(session, statements, raise_on_first_error=False)) == [
            (True, [(1,)]), (False, Failed(2))]
    assert (count.ours, count.drivers) == (1, 1)
    assert [ok for ok, _ in futures.execute_concurrent(lean, statements, 2, False, True)] == [True, False]
    assert (count.ours, count.drivers) == (1, 2)
    with pytest.raises(AttributeError):
        futures.execute_concurrent(object(), statements)


@pytest.mark.parametrize("step", ["__init__", "_put_result", "_on_success", "_execute"])
def test_a_replaced_driver_executor_runs_as_the_driver_runs_it(monkeypatch, step):
    """The driver's function looks its executor up when called: a replaced step (instrumentation, say)
    runs, through the driver's function, for a session with the leaner futures too."""
    monkeypatch.setattr(futures, "is_installed", lambda session: True)
    count = Counting(monkeypatch, futures._spec)
    ran = []
    original = getattr(DRIVERS, step)

    def replaced(*args, **kwargs):
        ran.append(step)
        return original(*args, **kwargs)

    monkeypatch.setattr(DRIVERS, step, replaced)
    results = futures.execute_concurrent(Session(True), [("s", ("ok", [(1,)]))])
    assert _outcome(results) == [(True, [(1,)])] and ran and (count.ours, count.drivers) == (0, 1)
    monkeypatch.undo()


@pytest.mark.parametrize("concurrency", [0, -1])
def test_a_concurrency_below_one_is_the_drivers_error(monkeypatch, concurrency):
    monkeypatch.setattr(futures, "is_installed", lambda session: True)
    errors = []
    for execute in (futures.execute_concurrent, futures.DRIVERS_EXECUTE_CONCURRENT):
        with pytest.raises(ValueError) as raised:
            execute(Session(True), [("s", ("ok", []))], concurrency)
        errors.append(str(raised.value))
    assert errors[0] == errors[1]
    assert futures.execute_concurrent(Session(True), [], 5) == []


def test_install_routes_the_drivers_helper_once(monkeypatch):
    monkeypatch.setattr(concurrent, "execute_concurrent", futures.DRIVERS_EXECUTE_CONCURRENT)
    futures._route_concurrent_lists()
    assert concurrent.execute_concurrent is futures.execute_concurrent
    futures._route_concurrent_lists()
    assert concurrent.execute_concurrent is futures.execute_concurrent


class Answered:
    """A finished future, as ``ResultSet`` reads one."""

    _col_names = ["a", "b"]
    _col_types = [int, str]
    has_more_pages = False


@pytest.mark.parametrize("rows", [[(1, "x")], [], None, ((1, "x"),), {"a": 1}, {}, 0, 7, iter([(2, "y")]), "ab"],
                         ids=["list", "empty", "none", "tuple", "mapping", "empty-mapping", "zero", "int", "iterator",
                              "str"])
def test_result_sets_as_the_drivers(spec, rows):
    """The same object state, attribute for attribute and in the same order (rows that are not a list
    or None are the driver's call)."""
    future = Answered()
    theirs, ours = ResultSet(future, rows), spec.result_set(ResultSet, future, rows)
    assert type(ours) is ResultSet
    assert list(vars(ours).items()) == list(vars(theirs).items())


def test_a_replaced_result_set_step_is_called(spec, monkeypatch):
    steps = []
    drivers = ResultSet._set_current_rows
    monkeypatch.setattr(ResultSet, "_set_current_rows", lambda self, rows: steps.append(rows) or drivers(self, rows))
    rows = [(1, "x")]
    assert spec.result_set(ResultSet, Answered(), rows).current_rows is rows and steps == [rows]

    class Mine(ResultSet):
        pass

    assert type(spec.result_set(Mine, Answered(), rows)) is Mine


@pytest.mark.parametrize("module", sorted(MODULES.values()))
def test_a_list_registered_as_a_mapping_later_is_one_row(module):
    """``ResultSet`` takes a mapping as one row; a registration made after the first result (any ABC
    registration is seen) is followed, as the driver follows it."""
    code = (f"import collections.abc, importlib; from cassandra.cluster import ResultSet\n"
            f"spec = importlib.import_module({module!r})\n"
            "class F:\n _col_names = _col_types = None\n"
            "rows = [(1,)]\n"
            "assert spec.result_set(ResultSet, F(), rows).current_rows is rows\n"
            "collections.abc.Mapping.register(list)\n"
            "ours, theirs = spec.result_set(ResultSet, F(), rows), ResultSet(F(), rows)\n"
            "assert ours.current_rows == theirs.current_rows == [rows], ours.current_rows\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]


def test_lean_futures_give_result_sets_as_the_drivers():
    future = futures.LeanResponseFuture.__new__(futures.LeanResponseFuture)
    future._event, future._col_names, future._col_types = threading.Event(), ["a"], [int]
    future._event.set()
    future._final_result = [(1,)]
    assert list(vars(future.result()).items()) == list(vars(ResultSet(future, [(1,)])).items())
    future._final_result, future._final_exception = _NOT_SET, Failed(3)
    with pytest.raises(Failed):
        future.result()


@pytest.mark.parametrize("target,module", [
    ("threading.Thread", "pyfactories.connection._writes"),
    ("cassandra.io.libevreactor.LibevLoop", "pyfactories.connection._writes"),
    ("cassandra.cluster.ResultSet", "pyfactories.futures._futures"),
    ("cassandra.concurrent.ExecutionResult", "pyfactories.futures._futures"),
    ("cassandra.metadata.Murmur3Token", "pyfactories.futures._futures"),
    ("cassandra.metadata.TokenMap", "pyfactories.futures._futures"),
    ("cassandra.cluster.ResultSet", "pyfactories.futures._futures_py"),
    ("cassandra.metadata.Murmur3Token", "pyfactories.futures._futures_py"),
])
def test_modules_imported_while_a_driver_class_is_a_stand_in(target, module):
    """A module first imported under ``mock.patch`` of a class it reads at import (a user's test suite
    does that): it imports, and later answers as the driver, through the driver's own calls."""
    code = (f"from unittest import mock\n"
            f"with mock.patch({target!r}):\n"
            f"    import {module} as spec\n"
            "from cassandra.cluster import ResultSet\n"
            "class F:\n _col_names = _col_types = None\n"
            "if hasattr(spec, 'result_set'):\n"
            "    assert spec.result_set(ResultSet, F(), [(1,)]).current_rows == [(1,)]\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:])


def test_a_long_chain_of_requests_that_fail_at_once_answers_as_the_drivers(spec):
    """Every request fails as it is sent (its errback runs inside ``add_callbacks``: all hosts down), so
    each error sends the next request from inside the last one's errback; deep enough, Python's
    recursion limit is an error of its own, recorded where the driver records it: the same answer.
    (The twin's Python frames reach the limit sooner than the compiled driver: it is held to the
    shortest chain only.)"""
    for statements in [150, 400, 1200] if spec.__name__ == MODULES["c"] else [150]:
        script = [("error", Failed(i)) for i in range(statements)]
        theirs, _ = run(DRIVERS, script, 1, False, True)
        ours, _ = run(spec.ListResults, script, 1, False, True)
        assert _shape(ours) == _shape(theirs), statements


def _shape(answer):
    """An answer with errors by type (a ``RecursionError``'s text names where it struck)."""
    kind, found = answer
    if kind == "raised":
        return kind, type(found)
    return kind, [(ok, result if isinstance(result, (list, Failed)) else type(result)) for ok, result in found]
