"""What the driver's libev loop does before it blocks, in one prepare watcher that runs no Python when
there is nothing to do (compiled in ``pyfactories.connection._libev_turn``; this is its pure-Python twin).

Every turn of the driver's libev loop (three to four per request, one request at a time) calls two prepare
watchers, both Python: the driver's ``LibevLoop._loop_will_run`` (it starts and stops the connections'
write watchers, starts new connections' read watchers, stops closed connections' watchers, services the
driver's own timer heap) and the one that arms the reactor timer of pyfactories' request timers.
:class:`LibevTurn` is one watcher that does both:

* **The driver's step** is taken over at the first turn, on the loop's thread, when the loop is the
  driver's ``LibevLoop`` whose ``_loop_will_run``, ``_update_timer`` and ``TimerManager.service_timeouts``
  are the driver's own, as imported, and its prepare watcher is the driver's. The driver's watcher is
  stopped and ``loop._preparer`` becomes a :class:`DriversStep`: its ``stop()`` (scylla-driver's
  ``_cleanup`` calls it) ends the step as stopping the driver's watcher would.
* **The common turn runs no Python** (:func:`watchers_step`): when the loop is not shutting down, no
  connection is new or closed and the driver's timer heap is empty, all the driver's step does is start
  and stop write watchers (a request queued, its bytes written); that is done here. The driver also sends
  the loop's notifier when it changed a watcher, which only makes the loop turn once more: libev applies a
  watcher started or stopped by a prepare watcher before it polls (this module's reactor timer is armed
  there too). That turn, two per request one request at a time, is left out. Any other turn calls the driver's own ``_loop_will_run`` (bound to the loop); an
  error it raises is reported as the driver's watcher reports it (``sys.unraisablehook``, with the
  driver's method as the object). Only what the driver's step reads is read.
* **The reactor timer** is armed at the service's ``wake_at``. With no request timer pending, it is
  stopped when the loop is shutting down or has no connection left (so that the loop can end). While the
  loop has connections, it stays armed at its last deadline, so that the next request's timer, due later,
  needs no wake-up of the loop. One request at a time, every request's timer used to wake the loop once
  more. A timer that fires with nothing due finds ``wake_at`` at the next deadline (or none, and is
  stopped).
"""

from __future__ import annotations

import sys
import time
import traceback
from typing import Any

from cassandra.connection import TimerManager

from ..futures._plans_py import _steps, _unchanged, bound_as, drivers_own
from ._timers_py import INF

try:
    from cassandra.io import libevreactor
except Exception:  # the driver raises DependencyException without its libev extension
    libevreactor = None  # and nothing here is used

#: the driver's functions as imported (a wrapper put in their place before is not the driver's own)
_STEPS = _steps(((libevreactor.LibevLoop, "_loop_will_run"), (libevreactor.LibevLoop, "_update_timer"),
                 (TimerManager, "service_timeouts"))) if libevreactor is not None else ()
_WILL_RUN, _UPDATE_TIMER, _SERVICE_TIMEOUTS = (
    (drivers_own(libevreactor.LibevLoop.__dict__.get("_loop_will_run")),
     drivers_own(libevreactor.LibevLoop.__dict__.get("_update_timer")),
     drivers_own(TimerManager.__dict__.get("service_timeouts"))) if libevreactor is not None else (None, None, None))
_OWN = bool(_STEPS) and all(then is fn for (_, _, then), fn in zip(_STEPS, (_WILL_RUN, _UPDATE_TIMER, _SERVICE_TIMEOUTS)))


def _as_imported() -> bool:
    return _OWN and _unchanged(_STEPS)


def _noop() -> None:
    pass


class DriversStep:
    """What ``loop._preparer`` is once :class:`LibevTurn` runs the driver's step: ``stop()`` ends the
    step and ``start()`` takes it up again, as they would stop and start the driver's watcher (which
    stays stopped, in :attr:`prepare`).

    libev runs a loop while its count of active watchers, less those unreferenced, is not zero. The
    driver unreferenced its watcher when it made it, so that the watcher holds no loop running, and
    stopping it (as scylla-driver's ``_cleanup`` does) leaves the count one lower still. The watcher of
    :class:`LibevTurn`, active and not unreferenced while it does the driver's step, takes the stopped
    watcher's place in the count; ``stop()`` unreferences the loop as stopping the driver's watcher
    would, and ``start()`` adds the one back with a timer that never fires (libev's wrapper has no
    ``ref``)."""

    __slots__ = ("prepare", "step", "running", "_loop", "_libev", "_held")

    def __init__(self, prepare: Any, step: Any, loop: Any, libev: Any) -> None:
        self.prepare, self.step, self.running = prepare, step, True
        self._loop, self._libev, self._held = loop, libev, None

    def start(self) -> None:
        if not self.running:
            self.running = True
            self._held = self._libev.Timer(self._loop._loop, _noop)
            self._held.start(_NEVER)

    def stop(self) -> None:
        if self.running:
            self.running = False
            held, self._held = self._held, None
            if held is not None:
                held.stop()
            else:
                self._loop._loop.unref()


#: seconds of the timer that holds a loop's count for a step started again (about 31 years)
_NEVER = 1e9


def takes_over(loop: Any, libev: Any) -> bool:
    """Whether the driver's step of ``loop`` can be taken over: the driver's loop, methods and watcher."""
    return (libevreactor is not None and type(loop) is libevreactor.LibevLoop and _as_imported()
            and bound_as(loop, "_loop_will_run", _WILL_RUN)
            and type(getattr(loop, "_preparer", None)) is libev.Prepare)


def watchers_step(loop: Any) -> bool:
    """The driver's ``_loop_will_run`` for a turn where it would only start and stop write watchers: the
    loop is not shutting down, no connection is new or closed, and the driver's timer heap is empty.
    Then each live connection whose write watcher is on while its queue is empty has it stopped, and
    each whose queue holds something while it is off has it started, as the driver does. True if it did
    that; False (having changed nothing) for every other
    turn, and for an error, which the driver's own step then meets."""
    try:
        if loop._shutdown or not _as_imported() or not bound_as(loop, "_update_timer", _UPDATE_TIMER):
            return False
        timers = loop._timers
        if type(timers) is not TimerManager or not bound_as(timers, "service_timeouts", _SERVICE_TIMEOUTS):
            return False
        queue, new_timers = timers._queue, timers._new_timers
        if type(queue) is not list or type(new_timers) is not list or queue or new_timers:
            return False
        new, closed, live = loop._new_conns, loop._closed_conns, loop._live_conns
        if type(new) is not set or type(closed) is not set or type(live) is not set or new or closed:
            return False
        changes = []
        for conn in tuple(live):  # the set may be replaced (by another thread) while a connection is read
            queued, active = bool(conn.deque), bool(conn._write_watcher_is_active)
            if queued != active:
                changes.append((conn, queued, conn._write_watcher))
        for conn, queued, watcher in changes:  # every read done: now the driver's changes
            if queued:
                watcher.start()
                conn._write_watcher_is_active = True
            else:
                if watcher:
                    watcher.stop()
                conn._write_watcher_is_active = False
        return True
    except BaseException:  # the driver's step then meets the same error and reports it
        return False


def has_connections(loop: Any) -> bool:
    """Whether the loop has a live connection (a loop without that set: none)."""
    try:
        return bool(loop._live_conns)
    except BaseException:
        return False


class LibevTurn:
    """The prepare watcher of one driver ``LibevLoop`` (made and started here) and the reactor timer of
    its timer service ``service``; ``libev``: the driver's ``libevwrapper``."""

    def __init__(self, loop: Any, service: Any, libev: Any) -> None:
        self.loop, self.service, self.libev = loop, service, libev
        self.drivers: DriversStep | None = None  # once the driver's step is taken over
        self.armed: float | None = INF  # what the reactor timer is set for (None: must be set again)
        self._looked = False  # whether the first turn looked at the driver's step
        self.timer = libev.Timer(loop._loop, self.on_timer)
        self.prepare = libev.Prepare(loop._loop, self)
        self.prepare.start()  # unreferenced at the first turn, unless it takes the driver's watcher's place


    def __call__(self, prepare: Any) -> None:
        if not self._looked:
            self._looked = True
            try:
                took = self._take_over()
            except BaseException:  # a loop not as the driver makes it: its own watcher goes on
                took = False
            if not took:
                self.loop._loop.unref()  # as the driver does for its own: this watcher keeps no loop running
        drivers = self.drivers
        try:
            if drivers is not None and drivers.running and not watchers_step(self.loop):
                try:
                    drivers.step(drivers.prepare)
                except BaseException as exc:  # as libev's wrapper reports an error of the driver's watcher
                    report_unraisable(exc, drivers.step)
        finally:
            self._arm()

    def _take_over(self) -> bool:
        loop = self.loop
        if not takes_over(loop, self.libev):
            return False
        theirs = loop._preparer
        theirs.stop()  # on the loop's thread, where libev watchers are touched
        self.drivers = DriversStep(theirs, loop._loop_will_run, loop, self.libev)
        loop._preparer = self.drivers
        return True

    def _arm(self) -> None:
        service, loop = self.service, self.loop
        if loop._shutdown:
            at = INF
        else:
            if not service.live and service.wake_at != INF and not has_connections(loop):
                service.idle()  # nothing pending and nothing to wait for: the loop may end
            at = service.wake_at
        if at == self.armed:
            return
        self.armed = at
        if at == INF:
            self.timer.stop()
        else:
            self.timer.start(max(at - time.monotonic(), 0.0))

    def on_timer(self) -> None:
        self.armed = None
        self.service.fire()


class _Unraisable:
    """What a hook of the application's is given: the fields CPython gives ``sys.unraisablehook`` for an
    error of a C callback."""

    def __init__(self, exc: BaseException, obj: Any) -> None:
        self.exc_type, self.exc_value, self.exc_traceback = type(exc), exc, exc.__traceback__
        self.err_msg, self.object = None, obj


def report_unraisable(exc: BaseException, obj: Any) -> None:
    """Report ``exc`` as CPython reports an error of a C callback ``obj`` (``PyErr_WriteUnraisable``): to
    the application's ``sys.unraisablehook``, or as CPython's own hook prints it."""
    hook = sys.unraisablehook
    if hook is not sys.__unraisablehook__:
        hook(_Unraisable(exc, obj))
        return
    print(f"Exception ignored in: {obj!r}", file=sys.stderr)
    traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
