"""Where the instrumentation hooks into the driver: connections, timers, the request path.

The driver's modules (cluster, connection, protocol, query...) are compiled, so
they show no Python frames to py-spy and cannot be timed from the inside. Each
region is therefore a Python wrapper (:func:`profiling.instrument._region`, its
code named by the region's marker), installed through the driver's own
extension points and only on the objects the harness made:

* the connection class: a subclass of the cluster's reactor class whose
  ``process_io_buffer`` (framing), ``process_msg`` (dispatch) and
  ``create_timer`` (timers) are timed. The cluster creates its next
  connections with it, and the session's open connections take it as their
  class (same layout: the driver's methods plus the timing);
* each of those connections' segment codec (protocol v5): the driver shares one
  codec between all connections, so each gets a copy whose ``encode`` is timed;
* the reactor's timer heap (libev and asyncore keep one ``TimerManager`` per
  process, serving the harness's cluster only): its ``service_timeouts``;
* ``session.execute_async`` (the request path), as an attribute of the session.

Few wrappers on the hot path, each costs a call (about half a microsecond):
per request one ``execute_async``, one ``create_timer``, one ``process_msg`` and
with protocol v5 one segment ``encode``; per read from a socket one
``process_io_buffer``; per turn of the libev loop one timer service.
"""

from __future__ import annotations

import copy
import sys
from typing import Any, Callable

from .instrument import DISPATCH, FRAMING, REQUEST, TIMERS, Recorder, _region

#: Class attribute of a timed connection class: the driver's class it times.
_BASE = "_pf_timed_base"


def _unwrapped(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` without a timing wrapper of an earlier install (one recorder times it)."""
    return getattr(fn, "__wrapped__", fn) if getattr(fn, "__name__", "").startswith("_pf_") else fn


def timed_connection_class(rec: Recorder, base: type) -> type:
    """A subclass of the reactor connection class ``base`` with framing, dispatch and timers timed."""
    base = getattr(base, _BASE, base)
    enable = base._enable_checksumming

    def _enable_checksumming(self: Any) -> None:
        enable(self)
        time_segment_codec(rec, self)

    namespace = {
        _BASE: base,
        "process_io_buffer": _region(rec, FRAMING, base.process_io_buffer, "_pf_framing"),
        "process_msg": _region(rec, DISPATCH, base.process_msg, "_pf_dispatch"),
        "create_timer": classmethod(_region(rec, TIMERS, base.create_timer.__func__, "_pf_timer")),
        "_enable_checksumming": _enable_checksumming,
    }
    return type(f"Timed{base.__name__}", (base,), namespace)


def time_segment_codec(rec: Recorder, conn: Any) -> None:
    """Give ``conn`` its own copy of its segment codec, ``encode`` timed as framing
    (decoding segments happens in ``process_io_buffer``, timed already)."""
    codec = getattr(conn, "_segment_codec", None)
    if codec is None:
        return
    own = copy.copy(codec)
    own.encode = _region(rec, FRAMING, _unwrapped(codec.encode), "_pf_framing")
    conn._segment_codec = own


def time_timer_service(rec: Recorder, conn_class: type) -> bool:
    """Time the reactor's timer heap service, if the reactor keeps a ``TimerManager``
    (libev, asyncore); False if it has none (asyncio schedules timers as tasks)."""
    module = sys.modules.get(getattr(conn_class, _BASE, conn_class).__module__)
    timers = getattr(getattr(module, "_global_loop", None), "_timers", None)
    if timers is None or not hasattr(timers, "service_timeouts"):
        return False
    timers.service_timeouts = _region(rec, TIMERS, _unwrapped(timers.service_timeouts), "_pf_timer")
    return True


def install(session: Any, rec: Recorder) -> None:
    """Time the session's connections, timers and ``execute_async`` from now on."""
    cluster = session.cluster
    timed = timed_connection_class(rec, cluster.connection_class)
    base = getattr(timed, _BASE)
    cluster.connection_class = timed
    for pool in list(session._pools.values()):
        for conn in pool.get_connections():
            if isinstance(conn, base):
                conn.__class__ = timed
                time_segment_codec(rec, conn)
    time_timer_service(rec, timed)
    session.execute_async = _region(rec, REQUEST, _unwrapped(session.execute_async), "_pf_request")
