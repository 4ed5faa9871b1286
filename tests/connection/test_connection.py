"""The request timer service on a fake clock, compiled (``pyfactories.connection._timers``, id ``c``) and in pure
Python (``pyfactories.connection._timers_py``, id ``py``), and ``cluster_options``."""

from __future__ import annotations

import gc
import importlib
import logging
import math
import threading
import time
import warnings
import weakref

import pytest
from cassandra.connection import Connection

from pyfactories import _driver, _support, connection, decoding
from pyfactories.connection._timers_py import INF

SETTLE_S = 10.0
TIMER_MODULES = {"c": "pyfactories.connection._timers", "py": "pyfactories.connection._timers_py"}


class Clock:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Service:
    """A service on a fake clock that records its wake-up requests and the callbacks fired."""

    def __init__(self, module, resolution: float = 0.01) -> None:
        self.clock = Clock()
        self.wakes: list[float] = []
        self.fired: list[object] = []
        self.timers = module.TimerService(self.wakes.append, clock=self.clock, resolution=resolution)

    def add(self, timeout: float, name: object):
        return self.timers.add(timeout, lambda: self.fired.append(name))

    def advance_to(self, t: float) -> float:
        self.clock.now = t
        return self.timers.fire()


@pytest.fixture(params=sorted(TIMER_MODULES), ids=sorted(TIMER_MODULES))
def timers(request):
    """The timer service's module under test (the compiled one must import: never skipped)."""
    return importlib.import_module(TIMER_MODULES[request.param])


@pytest.fixture
def svc(timers) -> Service:
    return Service(timers)


def test_fires_in_deadline_order_across_timeouts(svc):
    svc.add(10.0, "ten")
    svc.add(0.5, "half")
    svc.add(2.0, "two")
    svc.add(0.5, "half-2")
    assert svc.advance_to(100.4) == pytest.approx(100.5)
    assert svc.fired == []
    assert svc.advance_to(100.5) == pytest.approx(102.0)
    assert svc.fired == ["half", "half-2"]
    svc.advance_to(200.0)
    assert svc.fired == ["half", "half-2", "two", "ten"]
    assert svc.timers.live == 0 and svc.timers.wake_at == INF


def test_never_fires_early(svc):
    svc.add(1.0, "a")
    svc.clock.now = 100.0 + 1.0 - 1e-9
    svc.timers.fire()
    assert svc.fired == []
    svc.advance_to(101.0)
    assert svc.fired == ["a"]


def test_a_bucket_shares_a_queue_whose_deadlines_never_decrease(svc):
    a = svc.add(1.006, "a")      # deadline 101.006, bucket (1.00, 1.01]
    b = svc.add(1.004, "b")      # same 10 ms bucket: raised to 101.006, not earlier than a
    c = svc.add(1.011, "c")      # the next bucket: a queue of its own
    d = svc.add(1.0, "d")        # the bucket before
    assert svc.timers.buckets() == [100, 101, 102]
    assert b.deadline == a.deadline == pytest.approx(101.006)
    assert c.deadline == pytest.approx(101.011) and d.deadline == pytest.approx(101.0)
    svc.advance_to(101.005)
    assert svc.fired == ["d"]    # b is late by less than a bucket, never early
    svc.advance_to(101.006)
    assert svc.fired == ["d", "a", "b"]


def test_cancel_drops_the_callback_at_once(svc):
    class Request:
        def on_timeout(self):
            svc.fired.append(self)

    request = Request()
    ref = weakref.ref(request)
    handle = svc.timers.add(1.0, request.on_timeout)
    assert handle.pending
    del request
    gc.collect()
    assert ref() is not None     # the pending timer holds it
    handle.cancel()
    assert ref() is None         # freed on cancel, not when its deadline comes
    assert not handle.pending and handle.callback is None
    assert svc.timers.live == 0 and svc.timers.queued() == 0
    handle.cancel()              # twice: nothing happens
    svc.advance_to(200.0)
    assert svc.fired == []


@pytest.mark.parametrize("ends", ["cancelled", "fired"])
def test_a_finished_timer_keeps_nothing(timers, svc, ends):
    """A request future keeps its timer after it finishes: cancelled or fired, the timer lets go of its
    service and callback; the compiled one also leaves the cyclic GC, and nothing can be stored in it."""
    def callback():
        svc.fired.append("done")

    handle = svc.timers.add(1.0, callback)
    compiled = timers.__name__.endswith("._timers")
    assert gc.is_tracked(handle) or not compiled  # pending: its callback can lead back to it
    handle.cancel() if ends == "cancelled" else svc.advance_to(102.0)
    assert not handle.pending and handle.callback is None
    kept = gc.get_referents(handle)
    assert svc.timers not in kept and callback not in kept
    if compiled:
        assert not gc.is_tracked(handle)
        with pytest.raises(AttributeError):
            handle.callback = callback
    handle.cancel()  # once more: nothing happens
    assert svc.fired == ([] if ends == "cancelled" else ["done"])


@pytest.mark.parametrize("ends", ["cancelled", "fired"])
def test_a_callback_let_go_may_arm_another_timer(svc, ends):
    """Letting go of a finished timer's callback runs its finalizer, outside the service's lock: one that
    arms another timer on the same service neither waits forever nor is lost."""
    class Callback:
        def __call__(self):
            svc.fired.append("fired")

        def __del__(self):
            svc.add(5.0, "armed by the finalizer")

    handle = svc.timers.add(1.0, Callback())
    worker = threading.Thread(target=handle.cancel if ends == "cancelled" else lambda: svc.advance_to(102.0),
                              daemon=True)  # (one that waits forever must not keep the tests from ending)
    worker.start()
    worker.join(SETTLE_S)
    assert not worker.is_alive(), "the service's lock was held while the callback was let go"
    assert svc.timers.live == 1 and svc.fired == ([] if ends == "cancelled" else ["fired"])
    svc.advance_to(200.0)
    assert svc.fired[-1] == "armed by the finalizer"


def test_a_cancel_that_finds_the_timer_fired_meanwhile_does_nothing():
    """The loop's thread may fire a timer between the two steps of another thread's ``cancel()``: run at that
    point of the twin's lines by a trace function, the cancel then finds nothing to do. (The compiled
    ``cancel`` has no such point; the race with its lock is the regression corpus's.)"""
    import sys

    from pyfactories.connection import _timers_py

    svc = Service(_timers_py)
    handle = svc.add(1.0, "due")
    fired_in_between = []

    def tracer(frame, event, arg):
        if frame.f_code is not _timers_py.TimerHandle.cancel.__code__:
            return None

        def local(frame, event, arg):
            if event == "line" and "service" in frame.f_locals and not fired_in_between:
                fired_in_between.append(svc.advance_to(200.0))
            return local
        return local

    sys.settrace(tracer)
    try:
        handle.cancel()
    finally:
        sys.settrace(None)
    assert fired_in_between and svc.fired == ["due"]
    assert not handle.pending and handle.callback is None and svc.timers.live == 0


def test_cancel_in_the_middle_keeps_the_others(svc):
    handles = [svc.add(1.0, i) for i in range(5)]
    handles[0].cancel()
    handles[2].cancel()
    svc.advance_to(101.0)
    assert svc.fired == [1, 3, 4]


def test_wakes_only_for_an_earlier_deadline(svc):
    svc.add(10.0, "a")
    assert svc.wakes == [pytest.approx(110.0)]
    for _ in range(100):         # the same timeout again and again: no wake-up
        svc.add(10.0, "b")
    svc.add(20.0, "c")           # later than the wake-up requested: none
    assert len(svc.wakes) == 1
    svc.add(1.0, "d")            # earlier: one
    assert svc.wakes == [pytest.approx(110.0), pytest.approx(101.0)]
    assert svc.timers.wake_at == pytest.approx(101.0)


def test_after_firing_the_next_wake_up_is_the_earliest_head_and_adds_do_not_wake(svc):
    for i in range(3):
        svc.clock.now = 100.0 + i
        svc.add(10.0, i)
    assert len(svc.wakes) == 1
    assert svc.advance_to(110.0) == pytest.approx(111.0)
    svc.add(10.0, "later")       # 120.0 > 111.0 requested already
    assert len(svc.wakes) == 1


def test_a_cancelled_head_costs_one_early_look(svc):
    first = svc.add(1.0, "first")
    svc.clock.now = 100.5
    svc.add(1.0, "second")       # 101.5
    first.cancel()
    assert svc.advance_to(101.0) == pytest.approx(101.5)   # stale entry: nothing fired, re-armed for the head
    assert svc.fired == []
    svc.advance_to(101.5)
    assert svc.fired == ["second"]


def test_idle_forgets_the_wake_up_so_the_next_timer_asks_again(svc):
    h = svc.add(5.0, "a")
    assert not svc.timers.idle()
    h.cancel()
    assert svc.timers.idle() and svc.timers.wake_at == INF
    svc.add(5.0, "b")            # the same queue, still scheduled by a stale entry: it must wake anyway
    assert len(svc.wakes) == 2
    svc.advance_to(105.0)
    assert svc.fired == ["b"]


def test_negative_and_zero_timeouts_fire_at_once(svc):
    svc.add(-3.0, "neg")
    svc.add(0, "zero")
    assert svc.wakes == [pytest.approx(100.0)]
    svc.timers.fire()
    assert svc.fired == ["neg", "zero"]


@pytest.mark.parametrize("bad", [math.nan, "1", None])
def test_bad_timeouts_are_refused(svc, bad):
    with pytest.raises((ValueError, TypeError)):
        svc.timers.add(bad, lambda: None)
    assert svc.timers.live == 0 and svc.timers.queued() == 0


@pytest.mark.parametrize("bad", [0, -1, math.nan])
def test_bad_resolution_is_refused(timers, bad):
    with pytest.raises(ValueError, match="resolution"):
        timers.TimerService(lambda d: None, resolution=bad)


def test_a_callback_that_raises_is_logged_once_and_the_rest_fire(svc, caplog):
    def boom():
        raise ZeroDivisionError("boom")

    svc.add(1.0, "before")
    svc.timers.add(1.0, boom)
    svc.add(1.0, "after")
    svc.add(2.0, "later")
    with caplog.at_level(logging.ERROR, logger="pyfactories.connection"):
        svc.advance_to(101.0)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info[0] is ZeroDivisionError
    assert svc.fired == ["before", "after"]
    svc.advance_to(102.0)
    assert svc.fired == ["before", "after", "later"]


def test_a_callback_may_add_a_timer(svc):
    def again():
        svc.fired.append("first")
        svc.add(0.01, "retry")   # what the driver's _on_timeout does for a request not yet sent

    svc.timers.add(1.0, again)
    assert svc.advance_to(101.0) == pytest.approx(101.01)
    svc.advance_to(101.01)
    assert svc.fired == ["first", "retry"]


def test_many_timers_leave_nothing_behind_after_cancel(svc):
    for rnd in range(3):
        handles = [svc.add(10.0 + (i % 7) * 0.003, i) for i in range(20_000)]
        assert svc.timers.queued() == 20_000
        for h in handles:
            h.cancel()
        assert svc.timers.queued() == 0 and svc.timers.live == 0
        svc.clock.now += 1.0
    # the queues are emptied at once; the stale heap entries go when their time comes
    assert len(svc.timers._heads) <= len(svc.timers.buckets())
    svc.advance_to(svc.clock.now + 20.0)
    assert svc.timers.buckets() == [] and svc.timers._heads == [] and svc.fired == []


def test_threads_adding_and_cancelling_lose_nothing(svc):
    kept: list = []
    lock = threading.Lock()

    def work(k: int) -> None:
        mine = [svc.add(1.0 + k * 0.001, (k, i)) for i in range(2_000)]
        for h in mine[::2]:
            h.cancel()
        with lock:
            kept.extend(mine[1::2])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert svc.timers.live == svc.timers.queued() == 4_000
    svc.advance_to(200.0)
    assert sorted(svc.fired) == sorted((k, i) for k in range(4) for i in range(1, 2_000, 2))


def test_cluster_options_gives_our_libev_connection():
    options = connection.cluster_options()
    assert options == {"connection_class": connection.TimerQueueLibevConnection}
    assert issubclass(connection.TimerQueueLibevConnection, connection._LibevBase)
    assert connection.cluster_options(connection._LibevBase) == options
    assert connection.cluster_options(connection.TimerQueueLibevConnection) == options


def test_cluster_options_gives_our_asyncio_connection():
    from cassandra.io.asyncioreactor import AsyncioConnection

    assert connection.cluster_options(AsyncioConnection) == {
        "connection_class": connection.TimerQueueAsyncioConnection}


def test_cluster_options_warns_once_for_another_reactor():
    class OtherReactorConnection(Connection):
        pass

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert connection.cluster_options(OtherReactorConnection) == {}
    assert len(caught) == 1 and caught[0].category is RuntimeWarning
    assert "OtherReactorConnection" in str(caught[0].message) and "driver's timers" in str(caught[0].message)


def test_cluster_options_warns_for_an_untested_driver(monkeypatch):
    monkeypatch.setattr(connection, "DRIVER_UNSUPPORTED", "cassandra-driver 9.9 is not a driver release ...")
    with pytest.warns(RuntimeWarning, match="9.9"):
        assert connection.cluster_options() == {}


def test_cluster_options_warns_without_libev(monkeypatch):
    monkeypatch.setattr(connection, "LIBEV_UNAVAILABLE", "the driver's libev reactor is not available (no C)")
    with pytest.warns(RuntimeWarning, match="libev reactor is not available"):
        assert connection.cluster_options() == {}


def test_driver_release_check_names_the_tested_releases(monkeypatch):
    import cassandra

    monkeypatch.setattr(cassandra, "__version__", "0.0.1")
    why = _support.connection_off()
    assert "0.0.1" in why and "3.30.1" in why
    monkeypatch.undo()
    assert _support.connection_off() is None


def test_every_part_reads_the_one_list_of_tested_releases(monkeypatch):
    """One list of tested releases (``make test-matrix`` runs every part's tests on each): without the
    installed release in it, every part that uses the driver's internals is off, naming the release."""
    import cassandra

    assert all(why is None for why in (_support.connection_off(), _support.rows_off(), _support.binds_off(),
                                       _support.futures_off()))
    monkeypatch.setattr(_driver, "TESTED_RELEASES", {"cassandra-driver": ("0.0.1",)})
    for off in (_support.connection_off, _support.rows_off, _support.binds_off, _support.futures_off):
        assert f"{cassandra.__version__} is not a driver release it is tested on (cassandra-driver 0.0.1)" in off()


@pytest.mark.parametrize("dist, version", [(d, v) for d, vs in _driver.TESTED_RELEASES.items() for v in vs])
def test_each_tested_release_gets_our_classes(monkeypatch, dist, version):
    import cassandra

    from pyfactories import _driver

    monkeypatch.setattr(cassandra, "__version__", version)
    monkeypatch.setattr(_driver, "distribution", lambda: dist)
    assert _support.connection_off() is None
    monkeypatch.setattr(connection, "DRIVER_UNSUPPORTED", _support.connection_off())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert connection.cluster_options() == {"connection_class": connection.TimerQueueLibevConnection}


@pytest.mark.parametrize("dist, version", [
    ("scylla-driver", "3.29.10"), ("cassandra-driver", "3.29.3"), ("cassandra-driver", "3.29.12"),
    ("scylla-driver", "3.30.1"), ("cassandra-driver or scylla-driver", "3.30.1"), ("unknown", "3.30.1")])
def test_other_releases_get_one_warning_naming_them_and_no_options(monkeypatch, dist, version):
    import cassandra

    from pyfactories import _driver

    monkeypatch.setattr(cassandra, "__version__", version)
    monkeypatch.setattr(_driver, "distribution", lambda: dist)
    monkeypatch.setattr(connection, "DRIVER_UNSUPPORTED", _support.connection_off())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert connection.cluster_options() == {}
        assert connection.cluster_options(connection._AsyncioBase) == {}
    assert [w.category for w in caught] == [RuntimeWarning, RuntimeWarning]
    message = str(caught[0].message)
    assert f"{dist} {version} is not a driver release it is tested on" in message
    assert all(f"{d} {', '.join(v)}" in message for d, v in _driver.TESTED_RELEASES.items())


def test_the_installed_driver_has_every_internal_the_classes_use():
    assert _support.missing_internals() == []


def test_missing_internals_are_named(monkeypatch):
    wanted = {"cassandra.connection": ("Connection.process_msg", "Connection.no_such_method", "_Frame", "NoSuchName"),
              "cassandra.segment": ("SegmentCodec.FLAG_OFFSET", "CRC24_POLY"),
              "pyfactories_no_such_reactor": ("Anything",)}  # a reactor that does not import: said elsewhere
    assert _support.missing_internals(wanted) == ["cassandra.connection.Connection.no_such_method",
                                                    "cassandra.connection.NoSuchName"]
    monkeypatch.setattr(_support, "CONNECTION_INTERNALS", wanted)
    why = _support.connection_off()
    assert "lacks what its connection classes use" in why and "Connection.no_such_method" in why
    monkeypatch.setattr(connection, "DRIVER_UNSUPPORTED", why)
    with pytest.warns(RuntimeWarning, match="no_such_method") as caught:
        assert connection.cluster_options() == {}
    assert len(caught) == 1


def test_create_timer_before_the_reactor_exists_says_so(monkeypatch):
    monkeypatch.setattr(connection, "_libev_timers", None)
    monkeypatch.setattr(connection._libevreactor, "_global_loop", None)
    with pytest.raises(RuntimeError, match="not initialized"):
        connection.TimerQueueLibevConnection.create_timer(1.0, lambda: None)
    assert issubclass(connection.TimerQueueAsyncioConnection, Connection)


class FakeLibev:
    """The driver's libevwrapper as LibevTimers uses it: Timer and Prepare watchers that record calls."""

    class Loop:
        def __init__(self) -> None:
            self.unrefs = 0

        def unref(self) -> None:
            self.unrefs += 1

    class Timer:
        def __init__(self, loop, callback) -> None:
            self.callback, self.calls = callback, []

        def start(self, timeout: float) -> None:
            self.calls.append(("start", timeout))

        def stop(self) -> None:
            self.calls.append(("stop",))

    class Prepare:
        def __init__(self, loop, callback) -> None:
            self.callback, self.started = callback, False

        def start(self) -> None:
            self.started = True


class FakeDriverLoop:
    """The parts of the driver's LibevLoop that LibevTimers reads."""

    def __init__(self) -> None:
        self._loop = FakeLibev.Loop()
        self._thread = threading.current_thread()  # this test's thread plays the loop's thread
        self._shutdown = False
        self.notified = 0

    def notify(self) -> None:
        self.notified += 1


@pytest.fixture
def libev_side():
    loop = FakeDriverLoop()
    timers = connection.LibevTimers(loop, FakeLibev)
    return loop, timers


def test_libev_side_arms_its_timer_before_the_loop_blocks(libev_side):
    loop, timers = libev_side
    assert timers.turn.prepare.started and loop._loop.unrefs == 0
    added = time.monotonic()
    timers.service.add(5.0, lambda: None)
    assert loop.notified == 0            # added on the loop's thread: no wake-up needed
    timers.turn(timers.turn.prepare)
    assert loop._loop.unrefs == 1          # at its first turn: the driver's loop is not, so it keeps its own watcher
    armed = time.monotonic()
    (kind, timeout), = timers.turn.timer.calls
    assert kind == "start" and 5.0 - (armed - added) - 1e-3 <= timeout <= 5.0
    timers.turn(timers.turn.prepare)  # nothing changed: the timer is left alone
    assert len(timers.turn.timer.calls) == 1


def test_libev_side_wakes_the_loop_only_from_another_thread_and_only_for_earlier(libev_side):
    loop, timers = libev_side
    elsewhere = threading.Thread(target=lambda: [timers.service.add(t, lambda: None) for t in (5.0, 6.0, 5.0, 1.0)])
    elsewhere.start()
    elsewhere.join()
    assert loop.notified == 2            # the first deadline, then the earlier 1 s one


def test_libev_side_fires_rearms_stops_when_idle_and_on_shutdown(libev_side):
    loop, timers = libev_side
    fired = []
    timers.service.add(0.0, lambda: fired.append("now"))
    added = time.monotonic()
    later = timers.service.add(30.0, lambda: fired.append("later"))
    timers.turn(timers.turn.prepare)
    timers.turn.timer.callback()             # libev calls it when the timer expires
    assert fired == ["now"]
    timers.turn(timers.turn.prepare)
    armed = time.monotonic()
    assert timers.turn.timer.calls[-1][0] == "start"
    assert 30.0 - (armed - added) - 1e-3 <= timers.turn.timer.calls[-1][1] <= 30.0
    later.cancel()
    timers.turn(timers.turn.prepare)
    assert timers.turn.timer.calls[-1] == ("stop",)   # nothing pending: the loop may end
    timers.service.add(30.0, lambda: None)
    timers.turn(timers.turn.prepare)
    assert timers.turn.timer.calls[-1][0] == "start"
    loop._shutdown = True
    timers.turn(timers.turn.prepare)
    assert timers.turn.timer.calls[-1] == ("stop",)
