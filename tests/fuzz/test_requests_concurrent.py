"""Fuzz: ``execute_concurrent``'s list executor, compiled (``pyfactories.futures._futures``) against its
pure-Python twin and the driver's own executor, on sessions whose futures misbehave from Python: callbacks called twice or both of
them, results put back at places that do not exist (through the executor reachable from a callback),
``execute`` called again from inside a callback, statements that are not pairs, an iterator that
raises. All three answer the same (the same list, or the same error), and nothing crashes."""

from __future__ import annotations

from cassandra import concurrent
from hypothesis import given
from hypothesis import strategies as st

from pyfactories.futures import _futures
from pyfactories.futures import _futures_py
from tests.fuzz.conftest import fuzz

MODULES = {"compiled": _futures, "twin": _futures_py}
DRIVERS = concurrent.ConcurrentExecutorListResults  # the driver's own executor

behaviours = st.sampled_from(["ok", "error", "raise", "twice", "both", "bad-place", "huge-place", "not-int-place",
                              "again", "not-a-pair"])


class Future:
    _col_names = _col_types = None
    has_more_pages = False

    def __init__(self, how, n):
        self.how, self.n = how, n

    def add_callbacks(self, callback, errback, callback_args=(), callback_kwargs=None, errback_args=(),
                      errback_kwargs=None):
        executor = callback.__self__
        if self.how == "ok":
            callback([(self.n,)], *callback_args)
        elif self.how == "error":
            errback(ValueError(self.n), *errback_args)
        elif self.how == "twice":
            callback([(self.n,)], *callback_args)
            callback([(self.n,)], *callback_args)
        elif self.how == "both":
            callback([(self.n,)], *callback_args)
            errback(ValueError(self.n), *errback_args)
        elif self.how in ("bad-place", "huge-place", "not-int-place"):
            place = {"bad-place": -1 - self.n, "huge-place": 2**70, "not-int-place": "x"}[self.how]
            executor._put_result([(self.n,)], place, True)
        elif self.how == "again":
            executor.execute(2, False)


class Session:
    def execute_async(self, statement, params, execution_profile=None):
        how, n = params
        if how == "raise":
            raise KeyError(n)
        return Future(how, n)

    def submit(self, fn, *args):
        fn(*args)


def _statements(script, stop_at):
    for i, how in enumerate(script):
        if i == stop_at:
            raise RuntimeError("the statements' iterator raised")
        yield ("s", (how, i)) if how != "not-a-pair" else ("s",)


def _answer(executor, script, concurrency, fail_fast, stop_at):
    try:
        results = executor(Session(), _statements(script, stop_at), None).execute(concurrency, fail_fast)
    except Exception as exc:  # noqa: BLE001 (compared)
        return "raised", type(exc)  # (the text of an unpacking error is the interpreter's or Cython's)
    return [r if r is None else (r[0], r[1] if not hasattr(r[1], "current_rows") else list(r[1].current_rows))
            for r in results]


@fuzz
@given(script=st.lists(behaviours, max_size=12), concurrency=st.integers(1, 4), fail_fast=st.booleans(),
       stop_at=st.one_of(st.none(), st.integers(0, 12)))
def test_requests_concurrent_lists_answer_as_the_twin(script, concurrency, fail_fast, stop_at):
    answers = {name: _answer(module.ListResults, script, concurrency, fail_fast, stop_at)
               for name, module in MODULES.items()}
    assert _comparable(answers["compiled"]) == _comparable(answers["twin"]), (script, answers)
    driver = _answer(DRIVERS, script, concurrency, fail_fast, stop_at)
    assert _comparable(answers["compiled"]) == _comparable(driver), (script, answers, driver)


def _comparable(answer):
    """Errors by type; results by success and rows (an error object by its type and, but for the
    interpreter's unpacking errors, its args)."""
    if isinstance(answer, tuple):
        return answer
    return [r if r is None or not isinstance(r[1], Exception)
            else (r[0], type(r[1]), r[1].args if "unpack" not in str(r[1]) else None) for r in answer]
