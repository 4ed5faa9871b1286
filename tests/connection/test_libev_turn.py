"""The libev loop's turn before it blocks (``pyfactories.connection._libev_turn``, id ``c``, and its pure-Python
twin ``_libev_turn_py``, id ``py``) on a real driver ``LibevLoop`` that is never started: the driver's
prepare step taken over, done as the driver does it on the turns it covers, left to the driver on every
other, and the reactor timer armed."""

from __future__ import annotations

import importlib
import sys
import threading
import time
import types
from collections import deque

import pytest
from cassandra.io import libevreactor, libevwrapper
from hypothesis import given, settings
from hypothesis import strategies as st

from pyfactories.connection import _timers_py
from tests.connection.test_connection import FakeLibev

TURN_MODULES = {"c": "pyfactories.connection._libev_turn", "py": "pyfactories.connection._libev_turn_py"}
TIMER_MODULES = {"c": "pyfactories.connection._timers", "py": "pyfactories.connection._timers_py"}
INF = _timers_py.INF


class Watcher:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def start(self) -> None:
        self.calls.append("start")

    def stop(self) -> None:
        self.calls.append("stop")


class Conn:
    """What the driver's step reads and changes on a connection."""

    def __init__(self, queued: bool = False, active: bool = False, watcher: bool = True) -> None:
        self.deque = deque([b"request"]) if queued else deque()
        self._write_watcher_is_active = active
        self._write_watcher = Watcher() if watcher else None
        self._read_watcher = Watcher()
        self._socket = types.SimpleNamespace(close=lambda: None)
        self.endpoint = "fake"

    def seen(self) -> tuple:
        write, read = getattr(self, "_write_watcher", "gone"), getattr(self, "_read_watcher", "gone")
        return (self._write_watcher_is_active, write.calls if isinstance(write, Watcher) else write,
                read.calls if isinstance(read, Watcher) else read)


#: the driver's libevwrapper with a timer that records; the prepare watcher is the driver's own type
LIBEV = types.SimpleNamespace(Prepare=libevwrapper.Prepare, Timer=FakeLibev.Timer)


def load(kind):
    return importlib.import_module(TURN_MODULES[kind]), importlib.import_module(TIMER_MODULES[kind])


@pytest.fixture(params=["c", "py"])
def impl(request):
    return load(request.param)


def a_loop(loop_class=libevreactor.LibevLoop):
    loop = loop_class()
    loop._thread = threading.current_thread()  # this test's thread plays the loop's thread
    return loop


def a_turn(impl, loop, wake=lambda deadline: None):
    turns, timers = impl
    return turns.LibevTurn(loop, timers.TimerService(wake), LIBEV)


def states(conns):
    return [c.seen() for c in conns]


def test_the_first_turn_takes_the_drivers_step_over(impl):
    loop = a_loop()
    theirs = loop._preparer
    turn = a_turn(impl, loop)
    conn = Conn(queued=True)
    loop._live_conns = {conn}
    turn(turn.prepare)
    assert type(loop._preparer) is impl[0].DriversStep and loop._preparer is turn.drivers
    assert loop._preparer.prepare is theirs and loop._preparer.running
    assert conn.seen() == (True, ["start"], [])
    conn.deque.clear()
    turn(turn.prepare)
    assert conn.seen() == (False, ["start", "stop"], [])
    turn(turn.prepare)  # nothing to do
    assert conn.seen() == (False, ["start", "stop"], [])


def test_a_stopped_step_is_not_run_as_a_stopped_watcher_is_not(impl):
    loop = a_loop()
    turn = a_turn(impl, loop)
    turn(turn.prepare)
    loop._preparer.stop()  # scylla-driver's _cleanup does this
    conn = Conn(queued=True)
    loop._live_conns, loop._new_conns = {conn}, {conn}
    turn(turn.prepare)
    assert conn.seen() == (False, [], [])
    loop._preparer.start()
    turn(turn.prepare)
    assert conn.seen() == (True, ["start"], ["start"])


class Notifier:
    """The loop's notifier, counting what is sent."""

    def __init__(self) -> None:
        self.sent = 0

    def send(self) -> None:
        self.sent += 1


conn_states = st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()).filter(
    lambda s: s[2] or not (s[0] and not s[1])), max_size=4)  # no watcher to start: an error, tested below


@pytest.mark.parametrize("kind", ["c", "py"])
@settings(max_examples=150, deadline=None)
@given(live=conn_states, new=conn_states, closed=conn_states, heap=st.booleans(), shutdown=st.booleans())
def test_a_turn_changes_what_the_drivers_step_changes(kind, live, new, closed, heap, shutdown):
    impl = load(kind)
    def make():
        loop = a_loop()
        conns = [[Conn(*s) for s in group] for group in (live, new, closed)]
        loop._live_conns, loop._new_conns, loop._closed_conns = (set(g) for g in conns)
        finished = []
        if heap:
            due = types.SimpleNamespace(end=0.0, finish=lambda now: finished.append(now) or True)
            loop._timers._new_timers.append((0.0, due))
        loop._shutdown = shutdown
        return loop, conns, finished

    theirs, their_conns, their_finished = make()
    theirs._notifier = their_sends = Notifier()
    theirs._loop_will_run(theirs._preparer)
    ours, our_conns, our_finished = make()
    ours._notifier = our_sends = Notifier()
    turn = a_turn(impl, ours)
    turn(turn.prepare)
    assert [states(g) for g in our_conns] == [states(g) for g in their_conns]
    common = not (new or closed or heap or shutdown)  # done here, without the notifier's extra turn
    assert our_sends.sent == (0 if common else their_sends.sent)
    assert (ours._new_conns, ours._closed_conns, ours._live_conns == set(our_conns[0])) == (
        set(), set(), theirs._live_conns == set(their_conns[0]))
    assert len(our_finished) == len(their_finished) and ours._timers._queue == theirs._timers._queue == []


def test_an_error_of_the_drivers_step_is_reported_as_its_watcher_reports_it(impl, monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    loop = a_loop()
    turn = a_turn(impl, loop)
    broken = Conn(queued=True, watcher=False)  # a write watcher to start, and none
    loop._live_conns = {broken}
    turn(turn.prepare)
    (report,) = reported
    assert report.exc_type is AttributeError and report.object == loop._loop_will_run
    assert broken._write_watcher_is_active is False
    turn.timer.calls.clear()
    turn(turn.prepare)  # the next turn runs again
    assert len(reported) == 2


def test_an_error_goes_to_cpythons_own_hook_as_from_the_drivers_watcher_and_the_timer_is_armed(impl, monkeypatch,
                                                                                                capsys):
    monkeypatch.setattr(sys, "unraisablehook", sys.__unraisablehook__)  # (pytest's own is in its place)
    loop = a_loop()
    turn = a_turn(impl, loop)
    loop._live_conns = {Conn(queued=True, watcher=False)}
    turn.service.add(5.0, lambda: None)
    turn(turn.prepare)
    err = capsys.readouterr().err
    assert f"Exception ignored in: {loop._loop_will_run!r}" in err
    assert "AttributeError: 'NoneType' object has no attribute 'start'" in err
    assert turn.timer.calls and turn.timer.calls[-1][0] == "start"


def test_a_connection_that_changes_the_loop_while_read_is_read_from_a_snapshot(impl):
    loop = a_loop()
    turn = a_turn(impl, loop)
    turn(turn.prepare)
    others = [Conn(queued=True) for _ in range(50)]

    class Meddling(Conn):
        @property
        def deque(self):
            loop._live_conns.update(others)  # in place, as the driver never does
            return deque([b"x"])

        @deque.setter
        def deque(self, value):
            pass

    first = Meddling()
    loop._live_conns = {first}
    turn(turn.prepare)
    assert first._write_watcher_is_active is True
    assert not any(c._write_watcher_is_active for c in others)  # read on the next turn
    turn(turn.prepare)
    assert all(c._write_watcher_is_active for c in others)


def test_a_method_replaced_after_the_take_over_is_called_as_the_driver_calls_it(impl, monkeypatch):
    loop = a_loop()
    turn = a_turn(impl, loop)
    turn(turn.prepare)
    called = []
    drivers = libevreactor.LibevLoop._update_timer
    monkeypatch.setattr(libevreactor.LibevLoop, "_update_timer", lambda self: called.append("class") or drivers(self))
    turn(turn.prepare)
    assert called == ["class"]
    monkeypatch.undo()
    loop._update_timer = lambda: called.append("own")
    turn(turn.prepare)
    assert called == ["class", "own"]
    del loop._update_timer
    loop._timers.service_timeouts = lambda: called.append("timers")
    turn(turn.prepare)
    assert called == ["class", "own", "timers"]


def test_a_loop_or_method_not_the_drivers_own_keeps_the_drivers_watcher(impl, monkeypatch):
    class OwnLoop(libevreactor.LibevLoop):
        pass

    loop = a_loop(OwnLoop)
    theirs = loop._preparer
    turn = a_turn(impl, loop)
    turn(turn.prepare)
    assert loop._preparer is theirs and turn.drivers is None
    monkeypatch.setattr(libevreactor.LibevLoop, "_loop_will_run", lambda self, prepare: None)
    loop = a_loop()
    theirs = loop._preparer
    turn = a_turn(impl, loop)
    turn(turn.prepare)
    assert loop._preparer is theirs and turn.drivers is None


# --- the reactor timer ------------------------------------------------------------------------------

def test_the_timer_stays_armed_while_the_loop_has_connections(impl):
    loop = a_loop()
    woken = []
    turn = a_turn(impl, loop, wake=woken.append)
    loop._live_conns = {Conn()}
    first = turn.service.add(10.0, lambda: None)
    assert len(woken) == 1
    turn(turn.prepare)
    assert turn.timer.calls[-1][0] == "start"
    first.cancel()
    turn(turn.prepare)
    assert turn.timer.calls[-1][0] == "start" and len(turn.timer.calls) == 1  # not stopped
    elsewhere = threading.Thread(target=lambda: turn.service.add(10.0, lambda: None))
    elsewhere.start()
    elsewhere.join()
    assert len(woken) == 1  # due later than the armed deadline: no wake-up
    turn.service.add(1.0, lambda: None)
    assert len(woken) == 2  # earlier: one


def test_the_timer_stops_with_nothing_pending_once_the_loop_has_no_connection_or_shuts_down(impl):
    loop = a_loop()
    turn = a_turn(impl, loop)
    conn = Conn()
    loop._live_conns = {conn}
    turn.service.add(10.0, lambda: None).cancel()
    turn(turn.prepare)
    assert turn.timer.calls == [("start", pytest.approx(10.0, abs=0.5))]
    loop._live_conns = set()
    turn(turn.prepare)
    assert turn.timer.calls[-1] == ("stop",) and turn.service.wake_at == INF
    loop._live_conns = {conn}
    turn.service.add(10.0, lambda: None)
    turn(turn.prepare)
    assert turn.timer.calls[-1][0] == "start"
    loop._shutdown = True
    turn(turn.prepare)
    assert turn.timer.calls[-1] == ("stop",)


def test_a_timer_that_fires_with_nothing_due_is_armed_at_the_next_deadline_or_stopped(impl):
    loop = a_loop()
    turn = a_turn(impl, loop)
    loop._live_conns = {Conn()}
    turn.service.add(0.0, lambda: None).cancel()
    later = turn.service.add(30.0, lambda: None)
    added = time.monotonic()
    turn(turn.prepare)
    turn.timer.callback()  # libev calls it at the stale deadline: nothing due
    assert turn.armed is None
    turn(turn.prepare)
    kind, timeout = turn.timer.calls[-1]
    assert kind == "start" and 30.0 - (time.monotonic() - added) - 1e-3 <= timeout <= 30.0
    later.cancel()
    turn.service.fire(time.monotonic() + 60.0)
    turn(turn.prepare)
    assert turn.timer.calls[-1] == ("stop",)


# --- the loop ends as the driver's would: libev's count of what holds it ---------------------------

def runs_to_its_end(loop) -> bool:
    """Whether libev's loop returns, with only unreferenced watchers active (run on a thread of its own:
    a loop that nothing lets end would block the test)."""
    runner = threading.Thread(target=loop._loop.start, daemon=True)
    runner.start()
    runner.join(60)  # at once when it ends; the time a loaded machine may take to say so when not
    return not runner.is_alive()


def real_turn(impl, loop):
    turns, timers = impl
    return turns.LibevTurn(loop, timers.TimerService(lambda deadline: None), libevwrapper)


def test_a_loop_whose_step_is_taken_over_still_ends(impl):
    loop = a_loop()
    turn = real_turn(impl, loop)
    assert runs_to_its_end(loop)  # its first turn took the step over
    assert type(loop._preparer) is impl[0].DriversStep


def test_a_loop_whose_step_is_stopped_and_started_again_ends(impl):
    loop = a_loop()
    turn = real_turn(impl, loop)
    turn(turn.prepare)
    loop._preparer.stop()
    loop._preparer.stop()  # twice: once counted
    loop._preparer.start()
    loop._preparer.start()
    assert loop._preparer.running and runs_to_its_end(loop)


def test_a_loop_that_keeps_the_drivers_watcher_ends(impl):
    class OwnLoop(libevreactor.LibevLoop):
        pass

    loop = a_loop(OwnLoop)
    real_turn(impl, loop)
    assert runs_to_its_end(loop)
    assert type(loop._preparer) is libevwrapper.Prepare
