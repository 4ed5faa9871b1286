"""Connection classes whose request timeouts cost the same at 1,000 requests in flight as at 1.

    import pyfactories
    cluster = Cluster(["10.0.0.1"])
    pyfactories.enable(cluster)      # before connect(): these classes, and every other part
    # this part alone: Cluster(["10.0.0.1"], **pyfactories.connection.cluster_options())

Every request the driver sends with a timeout (its default is 10 s) gets a timer from
``connection_class.create_timer``. The driver's reactors push it onto one heap, wake the event
loop for each, and keep a cancelled timer, and the whole request it refers to, in the heap
until it reaches the top one timeout later. The classes here subclass the driver's own
connections and change only ``create_timer``: timers go to a :class:`~pyfactories.connection._timers_py.
TimerService` per reactor loop (FIFO queues per timeout bucket, a small heap of queue heads,
O(1) cancel that frees the request at once, a wake-up only when a deadline is earlier than any
already requested; compiled in ``pyfactories.connection._timers``). What a timeout does is the driver's: the callback is the driver's
``ResponseFuture._on_timeout``, so it raises the driver's ``OperationTimedOut``; ``timeout=None``
still creates no timer. Heartbeats do not use timers (they run on their own thread).

* :class:`TimerQueueLibevConnection` (``LibevConnection``): one reactor timer of ours on the
  driver's libev loop, re-armed before the loop blocks by a prepare watcher of ours, which also does the
  driver's own prepare step, in C when it has nothing to do (:mod:`pyfactories.connection._libev_turn_py`);
* :class:`TimerQueueAsyncioConnection` (``AsyncioConnection``): one ``loop.call_at`` handle.

Both also read their bytes with :class:`CompiledFraming`: the v4 frames and v5 segments a read
brought are cut and checked, and each answer is dispatched to its request (stream id, decoding,
the ``ResponseFuture``'s callback, the id given back) in C (``pyfactories.connection._framing``; its
pure-Python twin ``pyfactories.connection._framing_py`` under ``PYFACTORIES_NO_EXTENSIONS=1``); v5 segments are
encoded with compiled checksums. Both
coalesce their writes (:mod:`pyfactories.connection._writes_py`).
"""

from __future__ import annotations

import threading
import warnings
from typing import Any, Callable

from cassandra import segment
from cassandra.connection import Connection

from .. import _support
from .._impl import COMPILED
from ._timers_py import INF, TimerHandle
from ._writes_py import CoalescedAsyncioWrites, CoalescedWrites
from ._writes_py import _wake_loop as wake_loop

__all__ = ["CompiledFraming", "TimerQueueLibevConnection", "TimerQueueAsyncioConnection", "cluster_options"]

if COMPILED:
    from . import _encoding as encoding
    from . import _framing as framing
    from ._fields import ConnectionFields
    from ._libev_turn import LibevTurn
    from ._timers import CurrentTimers, TimerService
else:
    from . import _encoding_py as encoding
    from . import _framing_py as framing
    from ._fields_py import ConnectionFields
    from ._libev_turn_py import LibevTurn
    from ._timers_py import CurrentTimers, TimerService

_attach_lock = threading.Lock()


class LibevTimers:
    """The timer service of one driver ``LibevLoop``: a libev timer armed at the service's
    :attr:`~TimerService.wake_at` before the loop blocks, by :class:`LibevTurn` (the loop's prepare
    watcher, which also runs the driver's own step only on a turn that has something to do; libev
    watchers are only touched on the loop's thread); another thread that needs an earlier wake-up sends
    the loop's notifier."""

    def __init__(self, loop: Any, libev: Any) -> None:
        self.loop = loop
        self.service = TimerService(self._wake)
        self.turn = LibevTurn(loop, self.service, libev)

    def _wake(self, deadline: float) -> None:
        wake_loop(self.loop)  # (not on the loop's thread: its prepare watcher arms it before the loop blocks)


class AsyncioTimers:
    """The timer service of the driver's asyncio loop: one ``call_at`` handle at the service's
    :attr:`~TimerService.wake_at`, moved (on the loop's thread) only when it must be earlier."""

    def __init__(self, loop: Any, thread: threading.Thread | None) -> None:
        self.loop, self._thread = loop, thread
        self.service = TimerService(self._wake, clock=loop.time)
        self._handle: Any = None
        self._armed = INF

    def _wake(self, deadline: float) -> None:
        if self._thread is not None and self._thread.ident == threading.get_ident():
            self._arm()
        else:
            self.loop.call_soon_threadsafe(self._arm)

    def _arm(self) -> None:
        at = self.service.wake_at
        if at == self._armed:
            return
        if self._handle is not None:
            self._handle.cancel()
        self._armed = at
        self._handle = None if at == INF else self.loop.call_at(at, self._on_timer)

    def _on_timer(self) -> None:
        self._handle, self._armed = None, INF
        self.service.fire()
        self._arm()


class CompiledFraming:
    """A connection mixin: the driver's read loop (``process_io_buffer``), dispatch of answers
    (``process_msg``) and v5 segment codec (``_segment_codec``, set when the handshake turns
    checksumming on) from :mod:`framing`; the frames, segments, bytes, errors and log messages are
    the driver's."""

    #: the most bytes one read takes from the socket: the driver's 4 KiB make a 200-row page five to seven
    #: ``recv`` calls (its read loop, in the driver's ``handle_read``, reads until a read comes back short)
    in_buffer_size = 64 * 1024

    process_io_buffer = framing.process_io_buffer
    process_msg = framing.process_msg
    send_msg = encoding.send_msg

    def _enable_checksumming(self) -> None:
        super()._enable_checksumming()  # type: ignore[misc]
        self._segment_codec = our_codec(self._segment_codec)


_codecs: dict[tuple[Any, Any], Any] = {}


def our_codec(codec: Any) -> Any:
    """Ours in place of the driver's ``SegmentCodec`` (same compressor and decompressor); any other
    codec is kept."""
    if type(codec) is not segment.SegmentCodec:
        return codec
    key = (codec.compressor, codec.decompressor)
    ours = _codecs.get(key)
    if ours is None:
        ours = _codecs[key] = framing.SegmentCodec(*key)
    return ours


def _libev() -> tuple[Any, Any, str | None]:
    """(the driver's libevreactor module, LibevConnection, why not) ."""
    try:
        from cassandra.io import libevreactor
    except Exception as exc:  # the driver raises DependencyException (or ImportError) without its libev extension
        return None, Connection, f"the driver's libev reactor is not available ({exc})"
    return libevreactor, libevreactor.LibevConnection, None


def _asyncio() -> tuple[Any, str | None]:
    try:
        from cassandra.io.asyncioreactor import AsyncioConnection
    except Exception as exc:
        return Connection, f"the driver's asyncio reactor is not available ({exc})"
    return AsyncioConnection, None


_libevreactor, _LibevBase, LIBEV_UNAVAILABLE = _libev()
_AsyncioBase, ASYNCIO_UNAVAILABLE = _asyncio()
_libev_timers: LibevTimers | None = None


def libev_timers() -> LibevTimers:
    """The timer service of the driver's current libev loop (a new one after a fork)."""
    global _libev_timers
    timers, loop = _libev_timers, _libevreactor._global_loop
    if timers is not None and timers.loop is loop:
        return timers
    if loop is None:
        raise RuntimeError("the libev reactor is not initialized (Cluster.connect does that)")
    with _attach_lock:
        if _libev_timers is None or _libev_timers.loop is not loop:
            _libev_timers = LibevTimers(loop, _libevreactor.libev)
        return _libev_timers


class TimerQueueLibevConnection(ConnectionFields, CoalescedWrites, CompiledFraming,  # type: ignore[misc,valid-type]
                                _LibevBase):
    """The driver's ``LibevConnection`` with request timers from :class:`LibevTimers`, the attributes
    every request reads as fields (:mod:`pyfactories.connection._fields_py`), :class:`CompiledFraming`
    and :class:`~pyfactories.connection._writes_py.CoalescedWrites` (one loop wake-up when its write
    queue fills, one ``send()`` for what it holds)."""

    @classmethod
    def initialize_reactor(cls) -> None:
        super().initialize_reactor()
        libev_timers()

    @classmethod
    def handle_fork(cls) -> None:
        global _libev_timers
        super().handle_fork()
        _libev_timers = None

    #: ``create_timer(timeout, callback)``: a timer of :func:`libev_timers`, the current loop's
    create_timer = classmethod(CurrentTimers(_libevreactor, libev_timers).create_timer)


class TimerQueueAsyncioConnection(ConnectionFields, CoalescedAsyncioWrites,  # type: ignore[misc,valid-type]
                                  CompiledFraming, _AsyncioBase):
    """The driver's ``AsyncioConnection`` with request timers from :class:`AsyncioTimers`, the
    attributes every request reads as fields, :class:`CompiledFraming` and
    :class:`~pyfactories.connection._writes_py.CoalescedAsyncioWrites`."""

    _pyfactories_timers: AsyncioTimers | None = None

    @classmethod
    def initialize_reactor(cls) -> None:
        if "_loop_thread" not in cls.__dict__:  # a loop and thread of its own, even if the driver's class has one
            cls._loop, cls._loop_thread = None, None
        super().initialize_reactor()

    @classmethod
    def _timers(cls) -> AsyncioTimers:
        timers = cls._pyfactories_timers
        if timers is None or timers.loop is not cls._loop:
            with _attach_lock:
                timers = cls._pyfactories_timers
                if timers is None or timers.loop is not cls._loop:
                    if cls._loop is None:
                        raise RuntimeError("the asyncio reactor is not initialized (Cluster.connect does that)")
                    timers = cls._pyfactories_timers = AsyncioTimers(cls._loop, cls._loop_thread)
        return timers

    @classmethod
    def create_timer(cls, timeout: float, callback: Callable[[], object]) -> TimerHandle:
        return cls._timers().service.add(timeout, callback)


#: Why the connection classes cannot run on this driver, or None (``pyfactories._support``).
DRIVER_UNSUPPORTED = _support.connection_off()


def ours_for(connection_class: type | None = None) -> tuple[type | None, str | None]:
    """``(our connection class, None)`` for the driver's libev connection (``None``, the default, means
    libev) or its asyncio one (or ours, given back as they are); ``(None, why not)`` when this driver or
    reactor is not supported."""
    if DRIVER_UNSUPPORTED is not None:
        return None, DRIVER_UNSUPPORTED
    if connection_class in (None, _LibevBase, TimerQueueLibevConnection):
        ours, why = TimerQueueLibevConnection, LIBEV_UNAVAILABLE
    elif connection_class in (_AsyncioBase, TimerQueueAsyncioConnection):
        ours, why = TimerQueueAsyncioConnection, ASYNCIO_UNAVAILABLE
    else:
        name = getattr(connection_class, "__qualname__", repr(connection_class))
        return None, (f"{getattr(connection_class, '__module__', '?')}.{name} is not a connection class it has "
                      "timers for (the driver's LibevConnection or AsyncioConnection)")
    return (None, why) if why is not None else (ours, None)


def is_ours(connection_class: Any) -> bool:
    return isinstance(connection_class, type) and issubclass(
        connection_class, (TimerQueueLibevConnection, TimerQueueAsyncioConnection))


def cluster_options(connection_class: type | None = None) -> dict[str, Any]:
    """Keyword arguments for ``Cluster(...)``: ``{"connection_class": <ours>}`` (see :func:`ours_for`), or
    ``{}``, so the cluster keeps the driver's own connection, with one ``RuntimeWarning`` saying why.
    ``pyfactories.enable(cluster)`` does this (and turns every other part on) for a ``Cluster`` already made."""
    ours, why = ours_for(connection_class)
    if ours is None:
        warnings.warn(f"pyfactories request timers are off: {why}; the cluster keeps the driver's timers",
                      RuntimeWarning, stacklevel=2)
        return {}
    return {"connection_class": ours}
