"""A timer service for request timeouts whose cost does not grow with the requests in flight.

The driver gives every request a ``Timer`` pushed onto one heap, wakes its event loop for each,
and leaves a cancelled timer (with the request it holds) in the heap until it reaches the top,
one timeout later. Here instead:

* timers whose timeouts fall in the same bucket (``resolution``, 10 ms) share one FIFO queue;
  a queue's deadlines never decrease (a deadline is raised to its queue's last one when it
  would be earlier, so a timer fires at most one bucket late, never early), so the queue needs
  no heap: only its head can be due;
* a small heap holds one entry per queue (its head's deadline when pushed); a cancelled head
  leaves a stale entry behind, which costs one early look at that queue, nothing more;
* a queue is an ``OrderedDict`` keyed by the timer itself: ``cancel`` removes the timer in
  O(1) and drops its callback at once (a cancelled request is freed now, not one timeout later);
* ``wake(deadline)`` is called only when a new deadline is earlier than every wake-up already
  requested (:attr:`TimerService.wake_at`): with requests of one timeout, never at steady state.

The reactor side (``pyfactories.connection``) arms one reactor timer at :attr:`wake_at` and
calls :meth:`TimerService.fire` when it expires. All methods are thread-safe.
"""

from __future__ import annotations

import heapq
import logging
import math
import threading
import time
from collections import OrderedDict
from typing import Callable

RESOLUTION_S = 0.01
INF = math.inf
#: the last timeout bucket: a timeout of more ``resolution`` units (an infinite one too) goes to it
MAX_BUCKET = 2.0 ** 62

log = logging.getLogger("pyfactories.connection")


def seconds(value: object) -> float:
    """``value`` as the C ``double`` the compiled service takes (``PyFloat_AsDouble``): a ``float``
    (a subclass's own value), or what ``__float__`` or ``__index__`` give; ``TypeError`` otherwise
    (a string is not parsed)."""
    kind = type(value)
    if kind is float:
        return value  # type: ignore[return-value]
    if issubclass(kind, float):
        return float.__float__(value)  # type: ignore[arg-type]
    if hasattr(kind, "__float__") or hasattr(kind, "__index__"):
        return float(value)  # type: ignore[arg-type]
    raise TypeError(f"must be real number, not {kind.__name__}")


def bucket_of(timeout: float, resolution: float) -> int:
    """The bucket of a timeout of ``timeout`` seconds (not negative, not NaN): a timeout past
    :data:`MAX_BUCKET` units (billions of years, or infinite) shares the last one, as the driver
    takes any timeout (its deadline is its own, or its queue's later one: it never fires sooner)."""
    q = timeout / resolution
    if not q <= MAX_BUCKET:
        return int(MAX_BUCKET)
    return math.ceil(q)


class _Queue(OrderedDict):
    """Timers of one timeout bucket, oldest first; ``last`` is the latest deadline it was given."""

    def __init__(self, bucket: int) -> None:
        super().__init__()
        self.bucket = bucket
        self.last = -INF
        self.scheduled = False  # whether the heap holds an entry for this queue


class TimerHandle:
    """What ``create_timer`` returns: ``cancel()`` is all the driver calls on it. Once cancelled or fired it
    lets go of its service and callback (``callback`` is read-only)."""

    __slots__ = ("_service", "_queue", "deadline", "_callback")

    def __init__(self, service: TimerService, queue: _Queue, deadline: float, callback: Callable[[], object]) -> None:
        self._service: TimerService | None = service
        self._queue: _Queue | None = queue
        self.deadline = deadline
        self._callback: Callable[[], object] | None = callback

    @property
    def callback(self) -> Callable[[], object] | None:
        return self._callback

    @property
    def pending(self) -> bool:
        """Neither fired nor cancelled yet."""
        return self._queue is not None

    def cancel(self) -> None:
        service = self._service  # read once: a fire() on the loop's thread may let go of it meanwhile
        if self._queue is not None and service is not None:
            service._cancel(self)

    def _done(self) -> None:
        """Fired or cancelled: called outside the service's lock (dropping the callback may run any code)."""
        self._callback = self._service = None

    def __repr__(self) -> str:
        state = "pending" if self._queue is not None else "done"
        return f"<TimerHandle {state} deadline={self.deadline:.3f}>"


class TimerService:
    """Timers of one reactor loop. ``wake(deadline)`` asks the loop to wake up by ``deadline``
    (called outside the service's lock, from whichever thread added the timer); ``clock`` is the
    clock deadlines are measured on (the reactor's own)."""

    def __init__(self, wake: Callable[[float], object], clock: Callable[[], float] = time.monotonic,
                 resolution: float = RESOLUTION_S) -> None:
        if not resolution > 0:
            raise ValueError(f"resolution must be a positive number of seconds, not {resolution!r}")
        self._wake = wake
        self._clock = clock
        self._resolution = seconds(resolution)
        self._queues: dict[int, _Queue] = {}
        self._heap: list[tuple[float, int]] = []
        self._lock = threading.Lock()
        #: the earliest wake-up requested from the loop (INF: none); no pending deadline is earlier
        self.wake_at = INF
        #: timers neither fired nor cancelled
        self.live = 0

    def add(self, timeout: float, callback: Callable[[], object]) -> TimerHandle:
        """Call ``callback()`` on the loop once ``timeout`` seconds have passed, unless cancelled."""
        timeout = seconds(timeout)
        if not timeout >= 0:  # negative (time already up) fires at once; NaN is refused
            if math.isnan(timeout):
                raise ValueError("timeout must be a number of seconds, not NaN")
            timeout = 0.0
        bucket = bucket_of(timeout, self._resolution)
        deadline = seconds(self._clock()) + timeout
        with self._lock:
            queue = self._queues.get(bucket)
            if queue is None:
                queue = self._queues[bucket] = _Queue(bucket)
            if deadline < queue.last:
                deadline = queue.last
            queue.last = deadline
            handle = TimerHandle(self, queue, deadline, callback)
            queue[handle] = None
            self.live += 1
            if not queue.scheduled:
                queue.scheduled = True
                heapq.heappush(self._heap, (deadline, bucket))
            wake = deadline < self.wake_at
            if wake:
                self.wake_at = deadline
        if wake:
            self._wake(deadline)
        return handle

    def _cancel(self, handle: TimerHandle) -> None:
        with self._lock:
            queue = handle._queue
            if queue is None:
                return
            del queue[handle]
            handle._queue = None
            self.live -= 1
        handle._done()

    def fire(self, now: float | None = None) -> float:
        """Run the callbacks of every timer due by ``now`` (default: the clock), in deadline order
        per queue; return :attr:`wake_at`, the next wake-up the loop needs (INF: none). A callback
        that raises is logged and the others still run."""
        now = seconds(self._clock() if now is None else now)
        due: list[TimerHandle] = []
        with self._lock:
            heads, queues = self._heap, self._queues
            while heads and heads[0][0] <= now:
                _, bucket = heapq.heappop(heads)
                queue = queues[bucket]
                while queue:
                    head = next(iter(queue))
                    if head.deadline > now:
                        heapq.heappush(heads, (head.deadline, bucket))
                        break
                    queue.popitem(last=False)
                    head._queue = None
                    due.append(head)
                else:
                    queue.scheduled = False
                    del queues[bucket]
            self.live -= len(due)
            self.wake_at = heads[0][0] if heads else INF
        for handle in due:
            callback = handle.callback
            handle._done()
            try:
                callback()  # type: ignore[misc]
            except Exception:
                log.exception("request timer callback %r raised; the other timers go on", callback)
        return self.wake_at

    @property
    def _heads(self) -> list[tuple[float, int]]:
        """The heap of ``(deadline, bucket)``, one entry per queue: a copy (the service's own is
        changed under its lock only)."""
        with self._lock:
            return list(self._heap)

    def idle(self) -> bool:
        """With no timer pending, forget the wake-up requested (the loop may then stop its reactor
        timer, and the next timer added asks for a new one); True if idle."""
        with self._lock:
            if self.live:
                return False
            self.wake_at = INF
            return True

    def queued(self) -> int:
        """Timers held in the queues (pending ones: cancelled and fired ones are gone)."""
        with self._lock:
            return sum(len(q) for q in self._queues.values())

    def buckets(self) -> list[int]:
        """The timeout buckets that have a queue now, in ``resolution`` units."""
        with self._lock:
            return sorted(self._queues)


class CurrentTimers:
    """The timer service of a reactor's current loop, for its connection class's ``create_timer``
    (``classmethod(current.create_timer)``): ``made()`` gives the timers (``.loop``, ``.service``) of the loop
    ``reactor._global_loop`` is now, a new one after a fork; the last ones are kept with their loop and asked
    for again only once the reactor's loop is another."""

    def __init__(self, reactor: object, made: Callable[[], object]) -> None:
        self._reactor, self._made = reactor, made
        self._current: tuple[object, TimerService] | None = None

    def create_timer(self, cls: type, timeout: float, callback: Callable[[], object]) -> TimerHandle:
        current = self._current
        if current is None or current[0] is not self._reactor._global_loop:  # type: ignore[attr-defined]
            timers = self._made()
            current = self._current = (timers.loop, timers.service)  # type: ignore[attr-defined]
        return current[1].add(timeout, callback)
