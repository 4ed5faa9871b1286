"""Where the instrumentation hooks into the driver: connections, timers, the request path.

The driver's modules (cluster, connection, protocol, query...) are compiled, so
they show no Python frames to py-spy and cannot be timed from the inside. Each
region is therefore a Python wrapper (:func:`profiling.timing.instrument._region`, its
code named by the region's marker), installed through the driver's own
extension points and only on the objects the harness made:

* the connection class: a subclass of the cluster's connection class whose
  ``process_io_buffer`` (framing), ``process_msg`` (dispatch) and
  ``create_timer`` (timers) are timed. The cluster creates its next
  connections with it, and the session's open connections take it as their
  class (same layout: the class's methods plus the timing);
* each of those connections' segment codec (protocol v5): the driver shares one
  codec between all connections, so each gets a copy whose ``encode`` is timed;
* the reactor's timer services: the driver's timer heap (libev and asyncore keep
  one ``TimerManager`` per process, serving the harness's cluster only): its
  ``service_timeouts``; and pyfactories' timer service of the reactor loop
  (``pyfactories.connection._timers_py.TimerService``) when the cluster uses pyfactories'
  connection class: its ``fire``;
* ``session.execute_async`` (the request path), as an attribute of the session.

pyfactories' connection classes (``connection.cluster_options()``,
``pyfactories.connection``) are subclasses of the driver's, so the same timed
subclass fits them: ``process_io_buffer`` is then their compiled framing (one
call per read, no Python frame inside; the pure-Python twin under
``PYFACTORIES_NO_EXTENSIONS=1`` shows its frames under the marker),
``process_msg`` is what their read loop hands each frame to (a class that
overrides it, as the timed one does, is always called through it: each response
is timed as dispatch, nested in framing and subtracted from it),
``create_timer`` adds to their timer service, whose ``fire`` runs the timeouts
that expire, and ``_enable_checksumming`` gives the connection pyfactories'
segment codec before its copy is timed. Their ``send_msg`` encodes EXECUTE and
QUERY messages itself when the request's encoder is the driver's: the timed
class gives it the driver's ``encode_message`` in place of the timed handler's
wrapper of it, and times the whole ``send_msg`` as ``encode`` (the segment
codec's ``encode`` nested in it stays ``framing``). Their coalesced writes
(``pyfactories.connection._writes_py``: ``push`` queues, ``handle_read``/``handle_write``
send) are not a region: a ``push`` counts in the region that sends the request
(``request``, or ``dispatch`` for a callback that sends the next one), the
``send()`` on the event-loop thread counts as ``socket``, as the driver's
``handle_write`` does. Also ``socket``: the libev prepare watcher that re-arms
their reactor timer (a few attribute reads per loop turn, bound when the loop
was created, so it cannot be wrapped).

Few wrappers on the hot path, each costs a call (about half a microsecond):
per request one ``execute_async``, one ``create_timer``, one ``process_msg`` and
with protocol v5 one segment ``encode``; per read from a socket one
``process_io_buffer``; per turn of the libev loop one timer service (and with
pyfactories' timers one ``fire`` per expiry of their reactor timer).

:func:`install` puts these in place; :func:`instrument_session` adds the session's protocol
handler and row factory (or, with the fast path, each request's) to them: what a profiled
client of the harness installs.
"""

from __future__ import annotations

import copy
import threading
import types
import sys
from typing import Any, Callable

from . import instrument
from .instrument import DISPATCH, ENCODE, FRAMING, REQUEST, TIMERS, Recorder, _region

#: Class attribute of a timed connection class: the driver's class it times.
_BASE = "_pf_timed_base"


def _unwrapped(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` without a timing wrapper of an earlier install (one recorder times it)."""
    return getattr(fn, "__wrapped__", fn) if getattr(fn, "__name__", "").startswith("_pf_") else fn


def timed_connection_class(rec: Recorder, base: type) -> type:
    """A subclass of the connection class ``base`` (a reactor's, or pyfactories' subclass of one)
    with framing, dispatch and timers timed, and each connection's segment codec timed once the
    handshake sets it (``_enable_checksumming``)."""
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
    if _encodes_itself(base):
        namespace["send_msg"] = _region(rec, ENCODE, _unwrapping_encoder(base.send_msg), "encode_message")
    return type(f"Timed{base.__name__}", (base,), namespace)


def _encodes_itself(base: type) -> bool:
    """Whether ``base`` is pyfactories' connection, whose ``send_msg`` encodes EXECUTE and QUERY
    messages itself (when the request's encoder is the driver's ``encode_message``)."""
    try:
        from pyfactories.connection import encoding
    except ImportError:
        return False
    return getattr(base, "send_msg", None) is encoding.send_msg


def _unwrapping_encoder(send_msg: Callable[..., Any]) -> Callable[..., Any]:
    """``send_msg`` given the driver's ``encode_message`` in place of the timed handler's (which
    wraps it), so our connection encodes as it does unprofiled; the whole ``send_msg`` is then timed
    as encode (the segment codec's ``encode`` nested in it stays framing)."""
    from cassandra.protocol import ProtocolHandler

    plain = ProtocolHandler.encode_message.__func__

    def send(self: Any, msg: Any, request_id: int, cb: Any, encoder: Any = ProtocolHandler.encode_message,
             *args: Any, **kwargs: Any) -> Any:
        func = getattr(encoder, "__func__", None)
        if getattr(func, "__wrapped__", None) is plain:
            encoder = types.MethodType(plain, encoder.__self__)
        return send_msg(self, msg, request_id, cb, encoder, *args, **kwargs)

    return send


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
    """Time the reactor's timer services; False if it has none that can be timed.

    The driver's timer heap, if the reactor keeps a ``TimerManager`` (libev, asyncore; the
    driver's libev loop services it every turn, whatever the connection class); asyncio's
    timers are tasks. And, for pyfactories' connection classes, their loop's
    ``TimerService.fire`` (the timeouts that expire, their callbacks included).
    """
    base = getattr(conn_class, _BASE, conn_class)
    timed = False
    timers = _driver_timer_heap(base)
    if timers is not None:
        timers.service_timeouts = _region(rec, TIMERS, _unwrapped(timers.service_timeouts), "_pf_timer")
        timed = True
    service = ours_timer_service(base)
    if service is not None:
        service.fire = _region(rec, TIMERS, _unwrapped(service.fire), "_pf_timer")
        timed = True
    return timed


def _driver_timer_heap(base: type) -> Any:
    """The ``TimerManager`` of the driver's reactor module ``base`` (or a class it derives from)
    comes from, or None."""
    for klass in base.__mro__:
        module = sys.modules.get(klass.__module__)
        timers = getattr(getattr(module, "_global_loop", None), "_timers", None)
        if timers is not None and hasattr(timers, "service_timeouts"):
            return timers
    return None


def ours_timer_service(base: type) -> Any:
    """The ``pyfactories.connection._timers_py.TimerService`` that pyfactories' connection class ``base`` (or a
    subclass of it) gives its timers to, on the reactor loop it runs now; None for any other class
    or before its reactor is initialized (``Cluster.connect`` does that)."""
    ours = sys.modules.get("pyfactories.connection")  # never imported: not in use
    if ours is None:
        return None
    try:
        if issubclass(base, ours.TimerQueueLibevConnection):
            return ours.libev_timers().service
        if issubclass(base, ours.TimerQueueAsyncioConnection):
            return base._timers().service  # made now if no timer was: the timed subclass shares it
    except RuntimeError:
        return None
    return None


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


def instrument_session(session: Any, rec: Recorder) -> None:
    """Time the session's requests from its next one on: protocol handler, row factory and
    the driver hooks (:func:`install`: connections, timers, ``execute_async``).

    Call after the row factory choice was applied. With ``pyfactories.decoding`` on, each request
    gets its handler and row factory from the fast path's request-init listener: a listener added
    after it (:class:`TimedRequests`) times what each request got instead.
    """
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, _ConfigMode

    if _fastpath_on(session):
        session.add_request_init_listener(TimedRequests(rec))
    else:
        session.client_protocol_handler = instrument.timed_handler(rec, session.client_protocol_handler)
        if session.cluster._config_mode == _ConfigMode.LEGACY:
            session.row_factory = instrument.timed_row_factory(rec, session.row_factory)
        else:
            profile = session.cluster.profile_manager.profiles[EXEC_PROFILE_DEFAULT]
            profile.row_factory = instrument.timed_row_factory(rec, profile.row_factory)
    install(session, rec)


def _fastpath_on(session: Any) -> bool:
    fastpath = sys.modules.get("pyfactories.decoding")  # never imported: never enabled
    return fastpath is not None and getattr(fastpath, "AVAILABLE", False) and fastpath.is_enabled(session)


class TimedRequests:
    """A request-init listener: the protocol handler and row factory a request's future has, timed
    (each timed version made once). ``tuple_factory``, which hands rows the fast path built over
    as they are, is left as it is, so the driver's ``ResultSet.was_applied`` still recognises it."""

    def __init__(self, rec: Recorder) -> None:
        from cassandra.query import tuple_factory

        self.rec = rec
        self.untimed = tuple_factory
        self.handlers: dict[type, type] = {}
        self.factories: dict[int, tuple[Any, Any]] = {}  # id(factory) -> (factory, timed)
        self.lock = threading.Lock()

    def __call__(self, future: Any) -> None:
        handler = future._protocol_handler
        timed = self.handlers.get(handler)
        if timed is None:
            with self.lock:
                timed = self.handlers.setdefault(handler, instrument.timed_handler(self.rec, handler))
        future._protocol_handler = timed
        factory = future.row_factory
        if factory is None or factory is self.untimed:
            return
        entry = self.factories.get(id(factory))
        if entry is None or entry[0] is not factory:
            with self.lock:
                entry = self.factories[id(factory)] = (factory, instrument.timed_row_factory(self.rec, factory))
        future.row_factory = entry[1]
