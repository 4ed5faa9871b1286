"""``pyfactories.aio`` without a server, compiled (id ``c``) and pure Python (``py``), on the standard loop and
uvloop: the waker (one wake-up for requests finished together, nothing finished twice, a closed loop), and
awaiting the driver's own ``ResponseFuture`` finished by its own ``_set_final_result`` and
``_set_final_exception`` from another thread (results, errors, cancellation, several awaiting tasks)."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import types
import weakref
from functools import partial

import pytest
from cassandra import InvalidRequest
from cassandra.cluster import ResponseFuture, ResultSet

import pyfactories
from pyfactories import aio

from .loops import LOOPS

SETTLE_S = 10.0


def request_future(columns=("k",), cls=ResponseFuture):
    """A request future of the driver's class (or ``cls``) in the state the driver's ``__init__`` leaves it
    (the parts finishing it reads), not sent."""
    future = cls.__new__(cls)
    future._callback_lock = threading.Lock()
    future._event = threading.Event()
    future._callbacks, future._errbacks = [], []
    future._col_names, future._col_types = list(columns), []
    future._paging_state = None
    future._start_time = 0.0
    future._retry_aborted, future._page_generation = False, 0  # (scylla-driver's)
    return future


def finish_once_awaited(future, finish, *args):
    """``finish(*args)`` from another thread once a task awaits ``future`` (its awaiter added to the future's
    callbacks): a finish that must wake the loop, however late the awaiting task starts on a busy machine."""
    def run():
        deadline = time.monotonic() + SETTLE_S
        while not future._callbacks and time.monotonic() < deadline:
            time.sleep(0.005)
        finish(*args)

    threading.Thread(target=run, daemon=True).start()


def awaiting(spec, future):
    """An awaitable of ``future`` through ``spec`` (the module under test)."""
    return _await(Awaitable(spec, future))


class Awaitable:
    """``future`` awaited through ``spec``'s ``result_of`` (the module under test)."""

    def __init__(self, spec, future):
        self.spec, self.future = spec, future

    def __await__(self):
        return self.spec.result_of(self.future, aio.AsyncResultSet)


async def _await(awaitable):
    return await awaitable


def from_thread(fn, *args):
    thread = threading.Thread(target=fn, args=args)
    thread.start()
    return thread


def test_the_installed_module_is_the_compiled_one():
    assert aio._spec.__name__ == ("pyfactories.aio._aio" if pyfactories.__impl__ == "cython"
                                  else "pyfactories.aio._aio_py")


# The waker -------------------------------------------------------------------------------------

def test_requests_finished_together_wake_the_loop_once(spec, loop):
    waker = spec.waker_for(loop)
    assert spec.waker_for(loop) is waker

    async def main():
        waiters = [loop.create_future() for _ in range(500)]
        from_thread(lambda: [waker.post(w, i, False) for i, w in enumerate(waiters)]).join()
        return await asyncio.wait_for(asyncio.gather(*waiters), SETTLE_S)

    assert loop.run_until_complete(main()) == list(range(500))
    assert loop.threadsafe_calls == 1


def test_a_request_finished_after_a_drain_wakes_the_loop_again(spec, loop):
    waker = spec.waker_for(loop)

    async def main():
        first, second = loop.create_future(), loop.create_future()
        from_thread(waker.post, first, "a", False).join()
        assert await asyncio.wait_for(first, SETTLE_S) == "a"
        from_thread(waker.post, second, "b", False).join()
        return await asyncio.wait_for(second, SETTLE_S)

    assert loop.run_until_complete(main()) == "b"
    assert loop.threadsafe_calls == 2


def test_failures_cancelled_and_done_futures(spec, loop):
    waker = spec.waker_for(loop)
    error = InvalidRequest("no such table")

    async def main():
        failed, cancelled, done, refused = (loop.create_future() for _ in range(4))
        cancelled.cancel()
        done.set_result("first")
        for waiter, value, is_error in ((failed, error, True), (cancelled, 1, False), (done, "second", False),
                                        (refused, StopIteration(), True)):
            waker.post(waiter, value, is_error)
        await asyncio.sleep(0)
        assert failed.exception() is error
        assert cancelled.cancelled() and done.result() == "first"
        # what asyncio makes of a StopIteration: a TypeError, a RuntimeError from Python 3.13 on
        assert isinstance(refused.exception(), (TypeError, RuntimeError)) and "StopIteration" in str(refused.exception())

    loop.run_until_complete(main())
    assert loop.threadsafe_calls == 1


@pytest.mark.parametrize("kind", sorted(LOOPS))
def test_a_closed_or_collected_loop_drops_what_finishes_later(spec, kind):
    closed = LOOPS[kind]()
    waker = spec.waker_for(closed)
    waiter = closed.create_future()
    closed.close()
    waker.post(waiter, 1, False)  # no error: nothing can await it any more
    waker.post(waiter, 2, False)
    assert not waiter.done() and closed.threadsafe_calls == 1
    collected = asyncio.new_event_loop()
    gone = spec.Waker(collected)
    collected.close()
    del collected
    gc.collect()
    gone.post(object(), 1, False)


def test_a_loop_that_takes_no_attributes_gets_one_waker(spec, loop):
    class Slotted:
        __slots__ = ("__weakref__",)

    strange = Slotted()
    assert spec.waker_for(strange) is spec.waker_for(strange)


def test_a_lying_waiter_list_raises_instead_of_crashing(spec):
    future, rows, failure = request_future(), [], ValueError()
    future._final_result, future._final_exception = rows, failure
    awaiter = spec.Awaiter()
    awaiter.waiters = ((object(), object()),)
    with pytest.raises((TypeError, AttributeError)):
        awaiter.on_result(rows, weakref.ref(future))
    awaiter.waiters = 42
    with pytest.raises(TypeError):
        awaiter.on_error(failure, future)


# Awaiting the driver's future ------------------------------------------------------------------

def test_await_gives_the_result_set_the_driver_gives(spec, loop):
    future = request_future()

    async def main():
        finish_once_awaited(future, future._set_final_result, [(1,), (2,)])
        return await asyncio.wait_for(awaiting(spec, future), SETTLE_S)

    got = loop.run_until_complete(main())
    assert isinstance(got, ResultSet) and type(got) is aio.AsyncResultSet
    expected = future.result()
    assert list(got) == list(expected) == [(1,), (2,)]
    assert got.column_names == expected.column_names and got.response_future is future
    assert loop.threadsafe_calls == 1


def test_await_raises_the_drivers_exception(spec, loop):
    future = request_future()
    error = InvalidRequest("unconfigured table nowhere")

    async def main():
        finish_once_awaited(future, future._set_final_exception, error)
        return await asyncio.wait_for(awaiting(spec, future), SETTLE_S)

    with pytest.raises(InvalidRequest) as info:
        loop.run_until_complete(main())
    assert info.value is error


def test_a_finished_future_answers_without_waking_the_loop(spec, loop):
    ok, failed = request_future(), request_future()
    ok._set_final_result([(1,)])
    failed._set_final_exception(InvalidRequest("bad"))

    async def main():
        assert list(await awaiting(spec, ok)) == [(1,)]
        with pytest.raises(InvalidRequest, match="bad"):
            await awaiting(spec, failed)

    loop.run_until_complete(main())
    assert loop.threadsafe_calls == 0


def test_several_tasks_await_one_request(spec, loop):
    future = request_future()

    async def main():
        tasks = [asyncio.ensure_future(awaiting(spec, future)) for _ in range(3)]
        await asyncio.sleep(0.01)
        tasks[0].cancel()  # the others still wait: the request goes on
        await asyncio.sleep(0.01)
        assert "_timer_made" not in vars(future)
        from_thread(future._set_final_result, [(7,)]).join()
        results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), SETTLE_S)
        assert isinstance(results[0], asyncio.CancelledError)
        assert [list(r) for r in results[1:]] == [[(7,)], [(7,)]]

    loop.run_until_complete(main())


def test_a_drivers_future_keeps_one_awaiter_beside_it_not_in_its_dict(spec, loop):
    """Each page of a driver's future is awaited through one awaiter, registered once; nothing is stored in
    the future's ``__dict__`` from the loop's thread (where CPython 3.11 can free a dict twice), and the
    awaiter goes with the future."""
    future = request_future()
    before = set(vars(future))

    async def page(future, rows):
        finish_once_awaited(future, future._set_final_result, rows)
        return list(await asyncio.wait_for(awaiting(spec, future), SETTLE_S))

    assert loop.run_until_complete(page(future, [(1,)])) == [(1,)]
    awaiter = spec.awaiter_of(future)
    future._final_result = pyfactories_not_set()  # the next page, as ``start_fetching_next_page`` leaves it
    future._event.clear()
    assert loop.run_until_complete(page(future, [(2,)])) == [(2,)]
    assert spec.awaiter_of(future) is awaiter
    assert len(future._callbacks) == 1 and spec.AWAITER_ATTRIBUTE not in vars(future)
    assert set(vars(future)) - before == {"_final_result"}  # the driver's own store, nothing of ours
    key = id(future)
    assert key in spec._kept
    del future, awaiter
    gc.collect()
    assert key not in spec._kept


def test_a_future_that_takes_no_weak_reference_is_still_awaited(spec, loop):
    class NoWeak:
        """Duck-typed: a request future without ``__weakref__``."""
        __slots__ = ("inner",)

        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

    inner = request_future()
    future = NoWeak(inner)
    with pytest.raises(TypeError):
        weakref.ref(future)

    async def main():
        finish_once_awaited(inner, inner._set_final_result, [(3,)])
        return list(await asyncio.wait_for(awaiting(spec, future), SETTLE_S))

    assert loop.run_until_complete(main()) == [(3,)]
    assert id(future) not in spec._kept


def test_a_kept_awaiter_is_forgotten_only_by_its_own_future(spec):
    """The entry of a future gone is removed by its own weak reference's callback, never by another's (a
    new future may have the id of one gone)."""
    future = request_future()
    awaiter = spec.awaiter_of(future)
    key = id(future)
    entry = spec._kept[key]
    assert entry[1] is awaiter
    spec._forget(key, weakref.ref(request_future.__class__))  # another reference: the entry stays
    assert spec._kept[key] is entry
    spec._forget(key, entry[0])
    assert key not in spec._kept
    spec._kept[key] = entry  # back, for the future's own callback
    del future, awaiter, entry
    gc.collect()
    assert key not in spec._kept


@pytest.mark.parametrize("kind", ["driver's", "lean"])
def test_a_late_wake_of_a_page_gives_the_next_pages_awaiter_nothing(spec, loop, kind):
    """The driver calls a future's callbacks (and a lean future wakes its awaiter) after it has let the
    future's lock go. A task that meanwhile read that page itself and asked for the next one is woken by the
    next page, never by the late call with the page it has already read (rows given twice)."""
    from pyfactories import futures

    if kind == "lean":
        spec.wakes_itself(futures.LeanResponseFuture)
    future = lean_future() if kind == "lean" else request_future()
    following = {}

    class Window(threading.Event):
        """The future's event: set after the outcome is stored and the lock let go, before any wake."""

        def set(self):
            super().set()
            if not following:  # the task reads the page and asks for the next (``start_fetching_next_page``)
                future._final_result, future._event = pyfactories_not_set(), threading.Event()
                following["await"] = awaited = spec.result_of(future, aio.AsyncResultSet)
                following["waiter"] = awaited.send(None)  # the next page's await, its waiter registered

    async def main():
        first = asyncio.ensure_future(awaiting(spec, future))
        await asyncio.sleep(0.01)
        future._set_final_result([(1,)])  # page 1, awaited: the awaiter exists from now on
        assert list(await asyncio.wait_for(first, SETTLE_S)) == [(1,)]
        future._final_result, future._event = pyfactories_not_set(), Window()
        future._set_final_result([(2,)])  # page 2, read by the task in the window
        waiter = following["waiter"]
        await asyncio.sleep(0.01)
        assert not waiter.done()
        future._set_final_result([(3,)])  # page 3
        deadline = time.monotonic() + SETTLE_S
        while not waiter.done() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        with pytest.raises(StopIteration) as finished:  # the await, resumed as its task would resume it
            following["await"].send(None)
        return list(finished.value.value)

    assert loop.run_until_complete(main()) == [(3,)]


def test_a_wake_without_an_outcome_finishes_no_await(spec, loop):
    """The driver's ``add_callback`` on a finished future reads the outcome again after its lock: if the
    next page was asked for in between, the awaiter is handed "no result" (or no exception), and the
    tasks awaiting that next page keep waiting for it."""
    future = request_future()

    async def main():
        task = asyncio.ensure_future(awaiting(spec, future))
        await asyncio.sleep(0.01)
        awaiter = spec.awaiter_of(future)
        awaiter.on_result(pyfactories_not_set(), weakref.ref(future))
        awaiter.on_error(None, weakref.ref(future))
        await asyncio.sleep(0.01)
        assert not task.done()
        future._set_final_result([(4,)])
        return await asyncio.wait_for(task, SETTLE_S)

    assert list(loop.run_until_complete(main())) == [(4,)]


def pyfactories_not_set():
    from cassandra.cluster import _NOT_SET
    return _NOT_SET


class Timers:
    """A connection class's ``create_timer``: the callbacks it was given, run when the test says."""

    def __init__(self):
        self.callbacks = []

    def create_timer(self, delay, callback):
        self.callbacks.append((delay, callback))


def cancellable(spec, timers, owned=True):
    """A request future sent on a (fake) connection whose stream holds its callback (or another one's)."""
    future = request_future()
    future.session = types.SimpleNamespace(cluster=types.SimpleNamespace(connection_class=timers))
    future._req_id = 5
    callback = partial(future._set_result if owned else request_future()._set_result, None, None, None)
    future._connection = types.SimpleNamespace(_requests={5: (callback, None, None)})
    timeouts = []
    future._on_timeout = lambda: timeouts.append(5) or future._set_final_exception(TimeoutError("timed out"))
    return future, timeouts


@pytest.mark.parametrize("how", ["wait_for", "timeout", "cancel", "task group"])
def test_a_cancelled_await_ends_the_request_as_its_timeout_would(spec, loop, how):
    timers = Timers()
    future, timeouts = cancellable(spec, timers)

    async def fail_soon():
        await asyncio.sleep(0.01)
        raise ValueError("a sibling failed")

    async def main():
        if how == "wait_for":
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(awaiting(spec, future), 0.01)
        elif how == "timeout":
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.01):
                    await awaiting(spec, future)
        elif how == "cancel":
            task = asyncio.ensure_future(awaiting(spec, future))
            await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        else:
            with pytest.raises(ExceptionGroup):
                async with asyncio.TaskGroup() as group:
                    group.create_task(awaiting(spec, future))
                    group.create_task(fail_soon())

    loop.run_until_complete(main())
    assert [delay for delay, _ in timers.callbacks] == [0]
    assert timeouts == []  # only on the driver's IO thread, where its timer runs
    from_thread(timers.callbacks[0][1]).join()
    assert timeouts == [5] and isinstance(future._final_exception, TimeoutError)
    timers.callbacks[0][1]()  # again: the request has finished, nothing happens
    assert timeouts == [5]


def test_a_request_that_finished_or_left_its_stream_is_not_timed_out(spec, loop):
    timers = Timers()
    finished, finished_timeouts = cancellable(spec, timers)
    other, other_timeouts = cancellable(spec, timers, owned=False)

    async def main():
        for future in (finished, other):
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(awaiting(spec, future), 0.01)

    loop.run_until_complete(main())
    finished._set_final_result([(1,)])  # its answer came before the timer ran: dropped, no error
    for _, callback in timers.callbacks:
        callback()
    assert finished_timeouts == other_timeouts == [] and other._final_exception is None
    assert list(finished.result()) == [(1,)]


def test_an_answer_after_a_cancel_is_dropped_and_nothing_finishes_twice(spec, loop):
    future = request_future()
    future.session = types.SimpleNamespace(cluster=None)  # no timer can be made: the request goes on
    finished = []
    future.add_callbacks(finished.append, finished.append)

    async def main():
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(awaiting(spec, future), 0.01)
        from_thread(future._set_final_result, [(1,)]).join()
        await asyncio.sleep(0.01)

    loop.run_until_complete(main())
    assert finished == [[(1,)]]


def test_pages_follow_the_result_sets_current_rows(loop):
    future = request_future()
    future._set_final_result([(1,), (2,)])

    async def main():
        result = await aio.result(future)
        assert [page async for page in aio.pages(result)] == [[(1,), (2,)]]
        assert [row async for row in result] == [(1,), (2,)]
        assert result.current_rows == []  # as the driver's iterator leaves it
        await aio.fetch_next_page(result)
        return result

    assert loop.run_until_complete(main()).current_rows == []


def test_result_is_a_coroutine_that_tasks_gather_and_task_groups_take(loop):
    # (a generator-based coroutine is refused by asyncio's tasks from Python 3.12 on)
    done, pending = request_future(), request_future()
    done._set_final_result([(1,)])

    async def main():
        gathered = await asyncio.gather(aio.result(done), asyncio.ensure_future(aio.result(done)))
        async with asyncio.TaskGroup() as group:
            task = group.create_task(aio.result(pending))
            await asyncio.sleep(0)
            from_thread(pending._set_final_result, [(2,)]).join()
        return [list(r) for r in gathered], list(task.result())

    assert loop.run_until_complete(main()) == ([[(1,)], [(1,)]], [(2,)])


def test_loops_on_other_threads_each_finish_their_own(spec):
    requests = [request_future() for _ in range(2)]
    answers, started = {}, threading.Barrier(3, timeout=SETTLE_S)

    def on_its_own_loop(index, kind):
        loop = LOOPS[kind]()

        async def main():
            waiting = asyncio.ensure_future(awaiting(spec, requests[index]))
            await asyncio.sleep(0)  # the task awaits the request
            started.wait()
            return list(await asyncio.wait_for(waiting, SETTLE_S)), spec.waker_for(loop) is spec.waker_for(loop)

        try:
            answers[kind] = loop.run_until_complete(main()), loop.threadsafe_calls
        finally:
            loop.close()

    threads = [from_thread(on_its_own_loop, i, kind) for i, kind in enumerate(sorted(LOOPS))]
    started.wait()
    for index, future in enumerate(requests):
        future._set_final_result([(index,)])
    for thread in threads:
        thread.join()
    assert answers == {kind: (([(i,)], True), 1) for i, kind in enumerate(sorted(LOOPS))}


# On a session ----------------------------------------------------------------------------------

class Session:
    """The one method ``install`` replaces."""

    def __init__(self, made):
        self.made = made

    def _create_response_future(self, *args, **kwargs):
        return self.made


def test_install_makes_the_drivers_futures_awaitable_and_nothing_else(spec):
    class Other(ResponseFuture):
        pass

    plain, other = request_future(), Other.__new__(Other)
    session = Session(plain)
    assert aio.install(session) and aio.is_installed(session)
    aio.install(session)
    assert session._create_response_future("q", None) is plain and type(plain) is aio.AwaitableResponseFuture
    session.made = other
    assert session._create_response_future("q") is other and type(other) is Other
    aio.uninstall(session)
    assert "_create_response_future" not in vars(session) and not aio.is_installed(session)
    create = spec.AwaitableCreate(session, aio.AwaitableResponseFuture)
    assert (create.previous, create.base) == (None, ResponseFuture)


def test_the_lean_future_is_awaitable():
    from pyfactories import futures

    assert futures.LeanResponseFuture.__await__ is aio.await_response


def lean_future():
    """A ``pyfactories.futures.LeanResponseFuture`` in the state the driver leaves its own (not sent)."""
    from pyfactories import futures

    future = request_future(cls=futures.LeanResponseFuture)
    future._timer, future._metrics, future._callbacks, future._errbacks = None, None, None, None
    return future


@pytest.mark.parametrize("outcome", ["result", "exception"])
def test_a_lean_future_wakes_its_awaiter_itself(spec, loop, outcome):
    """No callback is added for the awaiter of a future that wakes it itself; its outcome still arrives,
    with one wake-up of the loop."""
    from pyfactories import futures

    spec.wakes_itself(futures.LeanResponseFuture)
    future, error = lean_future(), InvalidRequest("bad")

    async def main():
        task = asyncio.ensure_future(awaiting(spec, future))
        await asyncio.sleep(0.01)
        assert future._callbacks is None and future._errbacks is None
        finish = future._set_final_result if outcome == "result" else future._set_final_exception
        from_thread(finish, [(3,)] if outcome == "result" else error).join()
        return await asyncio.wait_for(task, SETTLE_S)

    if outcome == "result":
        assert list(loop.run_until_complete(main())) == [(3,)]
    else:
        with pytest.raises(InvalidRequest) as info:
            loop.run_until_complete(main())
        assert info.value is error
    assert loop.threadsafe_calls == 1


def test_a_callback_that_raises_leaves_no_task_waiting(spec, loop):
    """The awaiter is woken before the callbacks run: one that raises (out of the driver's
    ``_set_final_result``, as the driver's own does) cannot keep the awaiting task waiting."""
    from pyfactories import futures

    spec.wakes_itself(futures.LeanResponseFuture)
    future, raised = lean_future(), []

    def failing(rows):
        raise RuntimeError("a callback's own error")

    def finish():
        try:
            future._set_final_result([(5,)])
        except RuntimeError as exc:
            raised.append(exc)

    async def main():
        future.add_callback(failing)
        task = asyncio.ensure_future(awaiting(spec, future))
        await asyncio.sleep(0.01)
        from_thread(finish).join()
        return await asyncio.wait_for(task, SETTLE_S)

    assert list(loop.run_until_complete(main())) == [(5,)]
    assert [str(e) for e in raised] == ["a callback's own error"]


def test_an_awaiter_that_cannot_wake_does_not_stop_the_callbacks(caplog):
    """An awaiter someone replaced with what cannot wake is logged; the callbacks still run."""
    from pyfactories import futures

    future, seen = lean_future(), []
    future.add_callback(seen.append)
    future._pyfactories_awaiter = object()
    future._set_final_result([(1,)])
    assert seen == [[(1,)]] and future.result().one() == (1,)
    assert "could not wake the tasks awaiting" in caplog.text
    assert futures.LeanResponseFuture._set_final_result is futures._spec.set_final_result
