"""Fuzz: awaiting requests, compiled (``pyfactories.aio._aio``) against its pure-Python twin
(``pyfactories.aio._aio_py``): the waker under any order of posts, cancels, finishes and drains, with values
asyncio refuses (``StopIteration``, objects that are not exceptions); awaiters whose list of waiters was
replaced from Python; awaiting request futures whose outcome lies (an "exception" that is none, rows whose
comparison raises)."""

from __future__ import annotations

import asyncio
import threading
import types
from functools import partial

from cassandra.cluster import _NOT_SET, ResponseFuture
from hypothesis import given
from hypothesis import strategies as st

from pyfactories.aio import AsyncResultSet, _aio, _aio_py
from tests.fuzz.conftest import fuzz

MODULES = {"compiled": _aio, "twin": _aio_py}


class LyingRows(list):
    def __eq__(self, other):
        raise RuntimeError("compared")

    __hash__ = None


values = st.sampled_from(["rows", None, 0, "exception", "stop", "not an exception", "lying rows", "base exception"])


def make(value):
    return {"rows": [(1,)], "exception": ValueError("bad"), "stop": StopIteration(), "not an exception": 42,
            "lying rows": LyingRows([(2,)]), "base exception": KeyboardInterrupt()}.get(value, value)


def state(waiter):
    if waiter.cancelled():
        return "cancelled"
    if not waiter.done():
        return "pending"
    error = waiter.exception()
    return ("error", type(error).__name__) if error is not None else ("result", type(waiter.result()).__name__)


ops = st.lists(st.one_of(
    st.tuples(st.just("post"), st.integers(0, 4), values, st.booleans()),
    st.tuples(st.just("post from a thread"), st.integers(0, 4), values, st.booleans()),
    st.tuples(st.just("cancel"), st.integers(0, 4)),
    st.tuples(st.just("finish"), st.integers(0, 4)),
    st.just(("drain",)),
), max_size=30)


def replay(module, sequence):
    loop = asyncio.new_event_loop()
    try:
        waker = module.waker_for(loop)
        waiters = [loop.create_future() for _ in range(5)]
        for op in sequence:
            if op[0] == "post":
                waker.post(waiters[op[1]], make(op[2]), op[3])
            elif op[0] == "post from a thread":
                thread = threading.Thread(target=waker.post, args=(waiters[op[1]], make(op[2]), op[3]))
                thread.start()
                thread.join()
            elif op[0] == "cancel":
                waiters[op[1]].cancel()
            elif op[0] == "finish" and not waiters[op[1]].done():
                waiters[op[1]].set_result("by the loop")
            elif op[0] == "drain":
                waker.drain()
        before_the_loop = [state(w) for w in waiters]
        loop.run_until_complete(asyncio.sleep(0))  # the drains the posts asked for
        answer = before_the_loop, [state(w) for w in waiters]
        for waiter in waiters:  # (an exception nobody retrieves would be logged when collected)
            if waiter.done() and not waiter.cancelled():
                waiter.exception()
        return answer
    finally:
        loop.close()


@fuzz
@given(sequence=ops)
def test_aio_waker_as_its_twin(sequence):
    answers = {name: replay(module, sequence) for name, module in MODULES.items()}
    assert answers["compiled"] == answers["twin"], answers


waiter_lists = st.one_of(st.none(), st.just(()), st.integers(), st.text(max_size=3),
                         st.lists(st.sampled_from(["pair", "short", "not a waker", "number"]), max_size=3))


def waiters_of(module, loop, spec):
    if not isinstance(spec, list):
        return spec
    made = {"pair": lambda: (module.waker_for(loop), loop.create_future()), "short": lambda: (1,),
            "not a waker": lambda: (object(), loop.create_future()), "number": lambda: 7}
    return tuple(made[s]() for s in spec)


def _retrieve(made):
    """Each finished asyncio future's exception taken: one nobody retrieves is logged when it is collected,
    by a finalizer that may then run in the middle of anything (an import's parse has failed under it)."""
    for pair in made if isinstance(made, tuple) else ():
        waiter = pair[1] if isinstance(pair, tuple) and len(pair) == 2 else None
        if isinstance(waiter, asyncio.Future) and waiter.done() and not waiter.cancelled():
            waiter.exception()


@fuzz
@given(spec=waiter_lists, value=values, failed=st.booleans())
def test_aio_awaiter_with_any_waiters_as_its_twin(spec, value, failed):
    answers = {}
    for name, module in MODULES.items():
        loop = asyncio.new_event_loop()
        try:
            awaiter = module.Awaiter()
            awaiter.waiters = made = waiters_of(module, loop, spec)
            try:
                made_value = make(value)
                future = types.SimpleNamespace(_callback_lock=threading.Lock(), _final_result=made_value,
                                               _final_exception=made_value)
                awaiter.wake(future, made_value, failed)
                outcome = "woken"
            except Exception:  # the kind may differ (a C cast's TypeError, Python's AttributeError)
                outcome = "raised"
            loop.run_until_complete(asyncio.sleep(0))
            answers[name] = outcome, awaiter.waiters
            _retrieve(made)
        finally:
            loop.close()
    assert answers["compiled"][0] == answers["twin"][0], answers
    assert answers["compiled"][1] is None or answers["twin"][1] is not None, answers


def lying_future(rows, failure):
    future = ResponseFuture.__new__(ResponseFuture)
    future._callback_lock, future._event = threading.Lock(), threading.Event()
    future._callbacks, future._errbacks = [], []
    future._col_names, future._col_types, future._paging_state = ["k"], [], None
    future._final_result, future._final_exception = rows, failure
    return future


class _Awaitable:
    def __init__(self, module, future):
        self.module, self.future = module, future

    def __await__(self):
        return self.module.result_of(self.future, AsyncResultSet)


async def _awaiting(module, future):
    return await _Awaitable(module, future)


@fuzz
@given(rows=st.sampled_from(["unset", "rows", "lying rows", "none"]),
       failure=st.sampled_from([None, "exception", "not an exception", "stop"]))
def test_aio_awaiting_a_lying_future_as_its_twin(rows, failure):
    answers = {}
    for name, module in MODULES.items():
        future = lying_future(_NOT_SET if rows == "unset" else make(rows) if rows != "none" else None, make(failure))
        awaiting = partial(_awaiting, module, future)

        async def main():
            try:
                return ("result", len((await asyncio.wait_for(awaiting(), 0.01)).current_rows))
            except (Exception, asyncio.CancelledError) as exc:
                return ("error", type(exc).__name__)

        loop = asyncio.new_event_loop()
        try:
            answers[name] = loop.run_until_complete(main())
        finally:
            loop.close()
    assert answers["compiled"] == answers["twin"], answers
