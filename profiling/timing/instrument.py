"""Direct instrumentation: CPU time of the client, measured in nanoseconds.

Regions are timed with the calling thread's CPU clock (``time.thread_time_ns``,
user and kernel time), so a thread that loses the GIL in the middle of a region
is not charged for what other threads do meanwhile. Regions are exclusive: a
region nested in another is subtracted from the outer one. What is timed:

* ``deserialization``: the protocol handler's ``decode_message`` (a subclass of
  the session's handler), i.e. decoding every response, rows included;
* ``row_factory``: the session's row factory, wrapped;
* ``encode``: ``encode_message`` plus binding the statement's values
  (serialization happens at bind time, in :func:`timed_bind`);
* ``framing``: the connection's ``process_io_buffer`` (cutting the bytes read
  into frames; with protocol v5, segments and their CRC24/CRC32 checksums) and
  the segment codec's ``encode`` of each request; with pyfactories' connection
  class (``--connection pyfactories``) its compiled read loop and codec;
* ``dispatch``: the connection's ``process_msg`` (stream-id lookup, completing
  the ``ResponseFuture``, its locks, waking the thread waiting on it, running
  the callbacks chained on it), called by the read loop for each frame, so
  nested in ``framing`` and subtracted from it;
* ``timers``: the connection class's ``create_timer`` (a request timeout per
  request: a timer object, the reactor's heap and the wake-up of its loop) and
  the reactor's service of its timer heap (libev, asyncore); with pyfactories'
  connection class, its timer service's ``fire`` (the timeouts that expire);
* ``request``: ``Session.execute_async`` (routing, query plan, building the
  ``ResponseFuture`` and the message, handing it to a connection);
* ``wait``: CPU spent inside the execution pattern's blocking calls
  (``future.result()``, ``Event.wait``), see :meth:`Recorder.wait`.

The driver hooks are in :mod:`profiling.timing.hooks`. ``socket`` is the CPU of the
driver's event-loop thread that none of the regions above covers: the reactor
and its socket calls (the kernel time of ``send``/``recv`` and of waiting for
sockets; with pyfactories' connection class, its coalesced writes too); ``other``
is the rest of the process's CPU. The wrappers' code names
(:data:`MARKERS`) are what :mod:`profiling.sampling.categories` looks for in py-spy
stacks, so both methods draw the same boundaries.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable

from .procfs import task_cpu

CATEGORIES = ("deserialization", "row_factory", "encode", "framing", "dispatch", "timers", "request",
              "socket", "wait", "other")
REGIONS = ("deserialization", "row_factory", "encode", "framing", "dispatch", "timers", "request", "wait")
DESER, ROWS, ENCODE, FRAMING, DISPATCH, TIMERS, REQUEST, WAIT = range(len(REGIONS))
#: Code name of each timed wrapper -> its region (what py-spy shows of it).
MARKERS = {
    "decode_message": "deserialization", "_pf_row_factory": "row_factory", "encode_message": "encode",
    "_pf_bind": "encode", "_pf_framing": "framing", "_pf_dispatch": "dispatch", "_pf_timer": "timers",
    "_pf_request": "request", "_pf_wait": "wait",
}

#: Names of the driver's event-loop threads, by reactor.
LOOP_THREAD_NAMES = frozenset({
    "event_loop",  # libev
    "asyncio_thread",
    "cassandra_driver_twisted_event_loop",
    "asyncore_cassandra_driver_event_loop",
})

_clock = time.thread_time_ns


class _ThreadState:
    __slots__ = ("ident", "ns", "calls", "nested")

    def __init__(self, ident: int) -> None:
        self.ident = ident
        self.ns = [0] * len(REGIONS)
        self.calls = [0] * len(REGIONS)
        self.nested = 0  # ns of inner regions, charged to them, not to the outer one


class Recorder:
    """Accumulates region times per thread; one per process."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._states: list[_ThreadState] = []
        self._lock = threading.Lock()
        self._timed_wait = _region(self, WAIT, _call, "_pf_wait")

    def state(self) -> _ThreadState:
        try:
            return self._local.state
        except AttributeError:
            st = self._local.state = _ThreadState(threading.get_ident())
            with self._lock:
                self._states.append(st)
            return st

    def wait(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Call a blocking function (``future.result``...) as a ``wait`` region."""
        return self._timed_wait(fn, *args)

    def snapshot(self) -> dict[str, Any]:
        """Cumulative totals: regions (all threads and loop threads only), CPU clocks."""
        loop = _loop_threads()
        with self._lock:
            states = list(self._states)
        total = [0] * len(REGIONS)
        on_loop = [0] * len(REGIONS)
        calls = [0] * len(REGIONS)
        for st in states:
            for k in range(len(REGIONS)):
                total[k] += st.ns[k]
                calls[k] += st.calls[k]
                if st.ident in loop:
                    on_loop[k] += st.ns[k]
        return {
            "process_ns": time.process_time_ns(),
            "threads": _threads_cpu(),
            "loop_ns": sum(loop.values()),
            "loop_threads": len(loop),
            "regions_ns": dict(zip(REGIONS, total)),
            "regions_on_loop_ns": dict(zip(REGIONS, on_loop)),
            "calls": dict(zip(REGIONS, calls)),
        }


def _loop_threads() -> dict[int, int]:
    """CPU ns of each live event-loop thread of this process, by ident."""
    out = {}
    for t in threading.enumerate():
        if t.name in LOOP_THREAD_NAMES and t.ident is not None:
            try:
                out[t.ident] = time.clock_gettime_ns(time.pthread_getcpuclockid(t.ident))
            except (OSError, AttributeError):  # thread just ended, or no per-thread clocks
                pass
    return out


def _threads_cpu() -> dict[str, dict[str, Any]]:
    """Per live thread, by OS thread id (as py-spy shows it): name, CPU ns (schedstat,
    precise) and its system (kernel) part in ns (from stat's clock ticks)."""
    out = {}
    for t in threading.enumerate():
        tid = t.native_id
        try:
            ns, _queued, sys_ns = task_cpu(f"/proc/self/task/{tid}")
            out[str(tid)] = {"name": t.name, "ns": ns, "sys_ns": sys_ns}
        except (OSError, ValueError, IndexError):
            pass  # not Linux, or the thread just ended: its CPU goes to the unattributed rest
    return out


def _region(rec: Recorder, region: int, fn: Callable[..., Any], marker: str) -> Callable[..., Any]:
    """``fn`` timed as ``region``, in a wrapper whose code is named ``marker``.

    py-spy reads the name from the code object, so renaming it (rather than
    calling a shared helper) keeps one frame per region and the marker that
    :mod:`profiling.sampling.categories` looks for.
    """

    def timed(*args: Any, **kwargs: Any) -> Any:
        st = rec.state()
        outer = st.nested
        st.nested = 0
        t0 = _clock()
        try:
            return fn(*args, **kwargs)
        finally:
            dt = _clock() - t0
            st.ns[region] += dt - st.nested
            st.calls[region] += 1
            st.nested = outer + dt

    timed.__code__ = timed.__code__.replace(co_name=marker, co_qualname=marker)
    timed.__name__ = timed.__qualname__ = marker
    timed.__wrapped__ = fn  # type: ignore[attr-defined]
    return timed


def _call(fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


def timed_bind(rec: Recorder, bind: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``prepared.bind`` as an ``encode`` region (values are serialized there)."""
    return _region(rec, ENCODE, bind, "_pf_bind")


def timed_row_factory(rec: Recorder, factory: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    return _region(rec, ROWS, factory, "_pf_row_factory")


def timed_handler(rec: Recorder, base: Any) -> type:
    """A subclass of the protocol handler ``base`` timing encode and decode."""
    namespace = {
        "encode_message": classmethod(_region(rec, ENCODE, base.encode_message.__func__, "encode_message")),
        "decode_message": classmethod(_region(rec, DESER, base.decode_message.__func__, "decode_message")),
    }
    return type(f"Timed{base.__name__}", (base,), namespace)


def delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """``after - before`` of two snapshots of one process, plus its pid."""
    out: dict[str, Any] = {
        "pid": os.getpid(),
        "process_ns": after["process_ns"] - before["process_ns"],
        "loop_ns": after["loop_ns"] - before["loop_ns"],
        "loop_threads": after["loop_threads"],
        "threads": {tid: {"name": t["name"],
                          **{k: t[k] - before["threads"].get(tid, {}).get(k, 0)
                             for k in ("ns", "sys_ns")}}
                    for tid, t in after["threads"].items()},
    }
    for key in ("regions_ns", "regions_on_loop_ns", "calls"):
        out[key] = {k: after[key][k] - before[key][k] for k in REGIONS}
    return out


def combine(deltas: list[dict[str, Any]]) -> dict[str, Any]:
    """Sum the deltas of several processes (a pool's workers and their parent)."""
    out: dict[str, Any] = {"process_ns": 0, "loop_ns": 0, "loop_threads": 0, "threads": {},
                           "regions_ns": dict.fromkeys(REGIONS, 0),
                           "regions_on_loop_ns": dict.fromkeys(REGIONS, 0),
                           "calls": dict.fromkeys(REGIONS, 0)}
    for d in deltas:
        out["threads"].update(d["threads"])
        for key in ("process_ns", "loop_ns", "loop_threads"):
            out[key] += d[key]
        for key in ("regions_ns", "regions_on_loop_ns", "calls"):
            for k in REGIONS:
                out[key][k] += d[key][k]
    return out


def shares(d: dict[str, Any]) -> dict[str, float]:
    """Fractions of client CPU per category from a (combined) delta.

    ``socket`` = event-loop threads' CPU minus the regions that ran on them;
    ``other`` = what remains of the process CPU. Clock granularity can make
    the parts exceed the whole by a hair: they are then scaled to sum to 1.
    """
    ns = {k: float(d["regions_ns"][k]) for k in REGIONS}
    ns["socket"] = max(0.0, d["loop_ns"] - sum(d["regions_on_loop_ns"].values()))
    total = float(d["process_ns"])
    ns["other"] = max(0.0, total - sum(ns.values()))
    whole = sum(ns.values())
    if whole <= 0:
        return dict.fromkeys(CATEGORIES, 0.0)
    return {k: ns[k] / whole for k in CATEGORIES}
