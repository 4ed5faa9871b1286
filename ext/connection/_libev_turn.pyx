# cython: language_level=3
"""The driver's libev loop's turn before it blocks, in C: :class:`pyfactories.connection._libev_turn_py.LibevTurn`
and :class:`~pyfactories.connection._libev_turn_py.DriversStep` (their pure-Python twins, which document them)."""

cimport cython
from cpython.exc cimport PyErr_Restore, PyErr_WriteUnraisable
from cpython.ref cimport Py_INCREF
from cpython.object cimport PyObject

import time

from cassandra.connection import TimerManager

from as_imported cimport bound_as as _bound_as, drivers_own as _own, steps as _steps, unchanged as _unchanged

try:
    from cassandra.io import libevreactor
except Exception:  # the driver raises DependencyException without its libev extension
    libevreactor = None  # and nothing here is used

cdef double _INF = float("inf")
cdef object _monotonic = time.monotonic
cdef object _LibevLoop = None if libevreactor is None else libevreactor.LibevLoop
cdef object _TimerManager = TimerManager


cdef object _WILL_RUN = _own(None if _LibevLoop is None else _LibevLoop.__dict__.get("_loop_will_run"))
cdef object _UPDATE_TIMER = _own(None if _LibevLoop is None else _LibevLoop.__dict__.get("_update_timer"))
cdef object _SERVICE_TIMEOUTS = _own(TimerManager.__dict__.get("service_timeouts"))
# what the driver's step calls or is, on its classes, as imported: a class changed since is the driver's to run
cdef tuple _STEPS = _steps(((_LibevLoop, "_loop_will_run"), (_LibevLoop, "_update_timer"),
                            (_TimerManager, "service_timeouts"))) if _LibevLoop is not None else None


#: whether each of them, as imported, is the driver's own function
cdef bint _OWN = _STEPS is not None and all(
    len(step) == 3 and step[2] is fn for step, fn in zip(_STEPS[1:], (_WILL_RUN, _UPDATE_TIMER, _SERVICE_TIMEOUTS)))


cdef inline bint _as_imported() except -1:
    return _OWN and _unchanged(_STEPS)


cdef int _watchers_step(loop) except -1:
    """``pyfactories.connection._libev_turn_py.watchers_step``: 1 if it did the driver's step, 0 if the
    driver's step is to run (nothing changed)."""
    cdef list snapshot, changes = None
    cdef Py_ssize_t i = 0, n
    if loop._shutdown or not _as_imported() or not _bound_as(loop, "_update_timer", _UPDATE_TIMER):
        return 0
    timers = loop._timers
    if type(timers) is not _TimerManager or not _bound_as(timers, "service_timeouts", _SERVICE_TIMEOUTS):
        return 0
    queue, new_timers = timers._queue, timers._new_timers
    if type(queue) is not list or type(new_timers) is not list or <list>queue or <list>new_timers:
        return 0
    new, closed, live = loop._new_conns, loop._closed_conns, loop._live_conns
    if type(new) is not set or type(closed) is not set or type(live) is not set or <set>new or <set>closed:
        return 0
    # taken before any connection is read (reading one may run Python code), with nothing allocated while
    # the set is walked (no collection, so no finalizer, can change it meanwhile; if one did, the set's
    # iteration raises, and the driver's step runs)
    n = len(<set>live)
    snapshot = [None] * n
    for conn in <set>live:
        if i >= n:
            return 0
        snapshot[i] = conn
        i += 1
    if i != n:
        return 0
    for conn in snapshot:
        queued, active = bool(conn.deque), bool(conn._write_watcher_is_active)
        if queued != active:
            if changes is None:
                changes = []
            changes.append((conn, queued, conn._write_watcher))
    if changes is not None:
        for conn, queued, watcher in changes:  # every read done: now the driver's changes
            if queued:
                watcher.start()
                conn._write_watcher_is_active = True
            else:
                if watcher:
                    watcher.stop()
                conn._write_watcher_is_active = False
    return 1


cdef bint _did_watchers_step(loop) noexcept:
    try:
        return _watchers_step(loop) == 1
    except BaseException:
        return False


cdef void _unraisable(exc, obj) noexcept:
    """Report ``exc`` as CPython reports an error of a C callback ``obj`` (``sys.unraisablehook``)."""
    kind, tb = type(exc), exc.__traceback__
    Py_INCREF(kind)
    Py_INCREF(exc)
    if tb is not None:
        Py_INCREF(tb)
    PyErr_Restore(<PyObject*>kind, <PyObject*>exc, <PyObject*>tb if tb is not None else NULL)
    PyErr_WriteUnraisable(obj)


cdef bint _has_connections(loop) noexcept:
    try:
        return bool(loop._live_conns)
    except BaseException:
        return False


def _noop():
    pass


cdef double _NEVER = 1e9  # seconds of the timer that holds a loop's count for a step started again


@cython.final
@cython.auto_pickle(False)
cdef class DriversStep:
    """``pyfactories.connection._libev_turn_py.DriversStep``."""

    cdef readonly object prepare, step
    cdef readonly bint running
    cdef object _loop, _libev, _held

    def __cinit__(self, prepare, step, loop, libev):
        self.prepare, self.step, self.running = prepare, step, True
        self._loop, self._libev, self._held = loop, libev, None

    def start(self):
        if not self.running:
            self.running = True
            self._held = self._libev.Timer(self._loop._loop, _noop)
            self._held.start(_NEVER)

    def stop(self):
        if self.running:
            self.running = False
            held, self._held = self._held, None
            if held is not None:
                held.stop()
            else:
                self._loop._loop.unref()


@cython.auto_pickle(False)
cdef class LibevTurn:
    """``pyfactories.connection._libev_turn_py.LibevTurn``."""

    cdef readonly object loop, service, libev, timer, prepare
    cdef readonly DriversStep drivers
    cdef object _armed  # a float, or None: must be set again
    cdef bint _looked

    def __init__(self, loop, service, libev):
        self.loop, self.service, self.libev = loop, service, libev
        self.drivers = None
        self._armed = _INF
        self._looked = False
        self.timer = libev.Timer(loop._loop, self.on_timer)
        self.prepare = libev.Prepare(loop._loop, self)
        self.prepare.start()  # unreferenced at the first turn, unless it takes the driver's watcher's place

    @property
    def armed(self):
        return self._armed

    def __call__(self, prepare):
        cdef DriversStep drivers
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
            if drivers is not None and drivers.running and not _did_watchers_step(self.loop):
                step = drivers.step
                try:
                    step(drivers.prepare)
                except BaseException as exc:  # as libev's wrapper reports an error of the driver's watcher
                    _unraisable(exc, step)
        finally:
            self._arm()

    cdef bint _take_over(self) except -1:
        loop = self.loop
        if not (_LibevLoop is not None and type(loop) is _LibevLoop and _as_imported()
                and _bound_as(loop, "_loop_will_run", _WILL_RUN)
                and type(getattr(loop, "_preparer", None)) is self.libev.Prepare):
            return False
        theirs = loop._preparer
        theirs.stop()  # on the loop's thread, where libev watchers are touched
        self.drivers = DriversStep(theirs, loop._loop_will_run, loop, self.libev)
        loop._preparer = self.drivers
        return True

    cdef _arm(self):
        cdef double at
        service, loop = self.service, self.loop
        if loop._shutdown:
            at = _INF
        else:
            if not service.live and service.wake_at != _INF and not _has_connections(loop):
                service.idle()  # nothing pending and nothing to wait for: the loop may end
            at = service.wake_at
        armed = self._armed
        if armed is not None and <double>armed == at:
            return
        self._armed = at
        if at == _INF:
            self.timer.stop()
        else:
            self.timer.start(max(at - <double>_monotonic(), 0.0))

    def on_timer(self):
        self._armed = None
        self.service.fire()
