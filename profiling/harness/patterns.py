"""The execution patterns of the driver's performance notes and the write-ups after them,
each counting successes (and the rows they returned) and errors.

A pattern is data (:class:`Pattern`): a body ``body(ctx, ops)`` that runs the operations
``ops`` (a range of operation numbers) on one thread, and how it is spread: :func:`run`
splits the operations between ``--threads`` threads, and a process-pool pattern hands chunks
of them to pool workers (:mod:`profiling.harness.multiproc`), each running the same body. The profiler,
the end-to-end benchmark and the pool workers all run these bodies. Every blocking call goes
through ``ctx.wait`` (a timed ``wait`` region), every failure is counted in ``ctx.tally`` by
exception type, and every pattern stops issuing new requests once ``ctx.stop`` is set
(Ctrl-C, or :mod:`profiling.harness.watchdog` when requests keep failing), lets the requests in flight
finish, and returns.
"""

from __future__ import annotations

import collections
import functools
import itertools
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from cassandra.concurrent import execute_concurrent as _driver_execute_concurrent


def rows_in(result: Any) -> int:
    """Rows of a completed request: a ``ResultSet``'s current page, or the rows a callback gets."""
    if result is None:  # a write's result, as callbacks get it: no exception to raise and catch
        return 0
    rows = getattr(result, "current_rows", result)
    try:
        return len(rows)
    except TypeError:  # no rows (a write's result)
        return 0


class Tally:
    """Thread-safe counts: requests sent, successes and their rows, final failures (by exception
    type), retries. ``sent`` moves as soon as a request goes out (a pattern that sends everything
    before it collects anything counts nothing else until then): the watchdog's sign of life."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.sent = 0
        self.ok = 0
        self.rows = 0
        self.errors = 0
        self.retries = 0
        self.error_kinds: collections.Counter[str] = collections.Counter()
        self.first_error: str | None = None

    def success(self, result: Any = None) -> None:
        rows = rows_in(result)
        with self._lock:
            self.ok += 1
            self.rows += rows

    def error(self, exc: BaseException) -> None:
        with self._lock:
            self.errors += 1
            self.error_kinds[type(exc).__name__] += 1
            if self.first_error is None:
                self.first_error = f"{type(exc).__name__}: {exc}"[:500]

    def sending(self) -> None:
        with self._lock:
            self.sent += 1

    def retry(self) -> None:
        with self._lock:
            self.retries += 1

    def to_dict(self) -> dict[str, Any]:
        return {"sent": self.sent, "ok": self.ok, "rows": self.rows, "errors": self.errors, "retries": self.retries,
                "error_kinds": dict(self.error_kinds), "first_error": self.first_error}

    def add(self, other: dict[str, Any]) -> None:
        with self._lock:
            self.sent += other.get("sent", 0)
            self.ok += other["ok"]
            self.rows += other["rows"]
            self.errors += other["errors"]
            self.retries += other["retries"]
            self.error_kinds.update(other["error_kinds"])
            if self.first_error is None:
                self.first_error = other["first_error"]


SESSION_TIMEOUT: Any = object()


def _no_wait(fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


@dataclass
class Context:
    session: Any
    request: Callable[[int], Any]  # operation number -> bound statement
    concurrency: int = 120
    retries: int = 3
    wait: Callable[..., Any] = _no_wait  # Recorder.wait: times blocking calls
    stop: threading.Event = field(default_factory=threading.Event)
    tally: Tally = field(default_factory=Tally)
    stop_on_error: bool = False  # the first failure stops the pattern (a benchmark's measurement)
    timeout: float | None = None  # how long to wait for callback chains to finish (None: as long as it takes)
    #: passed to every ``execute_async`` as ``timeout`` (None: no timeout, so no timer per request);
    #: ``SESSION_TIMEOUT``: not passed, the session's execution profile decides
    request_timeout: Any = SESSION_TIMEOUT

    def __post_init__(self) -> None:
        self.execute_async: Callable[[Any], Any] = (
            self.session.execute_async if self.request_timeout is SESSION_TIMEOUT
            else functools.partial(self.session.execute_async, timeout=self.request_timeout))

    def failed(self, exc: BaseException) -> None:
        """Count a final failure (and stop issuing requests, if asked to)."""
        self.tally.error(exc)
        if self.stop_on_error:
            self.stop.set()


def _submit(ctx: Context, i: int) -> Any:
    """``execute_async`` of operation ``i`` (counted as sent); None (and an error counted) if it raised."""
    try:
        ctx.tally.sending()
        return ctx.execute_async(ctx.request(i))
    except Exception as exc:
        ctx.failed(exc)
        return None


def _collect(ctx: Context, future: Any) -> None:
    if future is None:
        return
    try:
        result = ctx.wait(future.result)
    except Exception as exc:
        ctx.failed(exc)
    else:
        ctx.tally.success(result)


def _until_stopped(ctx: Context, ops: Iterable[int]) -> Iterable[int]:
    return itertools.takewhile(lambda _: not ctx.stop.is_set(), ops)


def sync(ctx: Context, ops: range) -> None:
    """One request at a time: ``session.execute`` (= ``execute_async(...).result()``)."""
    for i in _until_stopped(ctx, ops):
        _collect(ctx, _submit(ctx, i))


def future_batches(ctx: Context, ops: range) -> None:
    """Start ``concurrency`` requests, wait for all of them, repeat."""
    batch: list[Any] = []
    for i in _until_stopped(ctx, ops):
        if len(batch) >= ctx.concurrency:
            for f in batch:
                _collect(ctx, f)
            batch = []
        batch.append(_submit(ctx, i))
    for f in batch:
        _collect(ctx, f)


def future_full_pipeline(ctx: Context, ops: range) -> None:
    """A queue of ``concurrency`` futures: wait for the oldest before each new one."""
    queue: collections.deque[Any] = collections.deque()
    for i in _until_stopped(ctx, ops):
        if len(queue) >= ctx.concurrency:
            _collect(ctx, queue.popleft())
        queue.append(_submit(ctx, i))
    while queue:
        _collect(ctx, queue.popleft())


def future_full_throttle(ctx: Context, ops: range) -> None:
    """Everything in flight at once, then wait: memory grows with the number of ops."""
    futures = [_submit(ctx, i) for i in _until_stopped(ctx, ops)]
    for f in futures:
        _collect(ctx, f)


def callback_full_pipeline(ctx: Context, ops: range) -> None:
    """``concurrency`` callback chains: each completion starts the next request.

    The callbacks run on the driver's event-loop thread, so once started the
    whole pattern runs there while this thread just waits.
    """
    pending = iter(ops)
    lock = threading.Lock()
    done = threading.Event()
    in_flight = 0
    local = threading.local()  # ``starting``: this thread is in add_callbacks; ``ended``: it ran them

    def start_next() -> None:
        """Start requests until one is in flight or none is left. A request that completes inside
        ``add_callbacks`` (one that failed at once: no host) is followed by this loop, not by a
        nested call, which would nest one call per request while a node is down."""
        nonlocal in_flight
        while True:
            with lock:
                i = None if ctx.stop.is_set() else next(pending, None)
                if i is None:
                    if in_flight == 0:
                        done.set()
                    return
                in_flight += 1
            future = _submit(ctx, i)
            if future is None:  # the request failed to start: try the next one
                with lock:
                    in_flight -= 1
                continue
            local.starting, local.ended = True, False
            try:
                future.add_callbacks(on_success, on_error)
            finally:
                local.starting = False
            if not local.ended:
                return

    def finished() -> None:
        nonlocal in_flight
        with lock:
            in_flight -= 1
        if getattr(local, "starting", False):
            local.ended = True
        else:
            start_next()

    def on_success(rows: Any) -> None:
        ctx.tally.success(rows)
        finished()

    def on_error(exc: BaseException) -> None:
        ctx.failed(exc)
        finished()

    for _ in range(max(1, min(ctx.concurrency, len(ops)))):
        start_next()
    if not ctx.wait(done.wait, ctx.timeout):
        raise TimeoutError(f"callback chains: {in_flight} requests still in flight after {ctx.timeout} s")


def execute_concurrent(ctx: Context, ops: range) -> None:
    """The driver's helper (``cassandra.concurrent.execute_concurrent``), results streamed."""

    def statements() -> Iterable[tuple[Any, None]]:
        for i in _until_stopped(ctx, ops):
            try:
                ctx.tally.sending()  # the helper sends each statement as it takes it
                yield ctx.request(i), None
            except Exception as exc:  # a bind error must not abort the whole helper
                ctx.failed(exc)

    results = iter(_driver_execute_concurrent(ctx.session, statements(), concurrency=ctx.concurrency,
                                              raise_on_first_error=False, results_generator=True))
    done = object()
    while (item := ctx.wait(next, results, done)) is not done:
        ok, result = item
        if ok:
            ctx.tally.success(result)
        else:
            ctx.failed(result)


def async_errback(ctx: Context, ops: range) -> None:
    """The sync-vs-async write-up's loop: ``execute_async`` with callbacks and errbacks, at most
    ``concurrency`` requests in flight, failed requests retried up to
    ``retries`` times, and the ones still failing counted as lost (errors).

    Two deliberate changes from the blog's code: the in-flight limit blocks on
    a condition instead of sleeping 500 ms after polling the pool state, and
    the errback retries asynchronously (a blocking ``execute`` in an errback
    would stall the driver's event loop, which runs it).
    """
    cond = threading.Condition()
    in_flight = 0

    def release() -> None:
        nonlocal in_flight
        with cond:
            in_flight -= 1
            cond.notify()

    def send(i: int, attempt: int) -> None:
        try:
            ctx.tally.sending()
            future = ctx.execute_async(ctx.request(i))
        except Exception as exc:
            on_error(exc, i, attempt)
            return
        future.add_callbacks(on_success, on_error, errback_args=(i, attempt))

    def on_success(rows: Any) -> None:
        ctx.tally.success(rows)
        release()

    def on_error(exc: BaseException, i: int, attempt: int) -> None:
        if attempt < ctx.retries and not ctx.stop.is_set():
            ctx.tally.retry()
            send(i, attempt + 1)
        else:
            ctx.failed(exc)
            release()

    for i in _until_stopped(ctx, ops):
        with cond:
            while in_flight >= ctx.concurrency:
                ctx.wait(cond.wait)
            in_flight += 1
        send(i, 0)
    with cond:
        while in_flight:
            ctx.wait(cond.wait)


@dataclass(frozen=True)
class Pattern:
    name: str
    body: Callable[[Context, range], None]  # one thread's (or one pool task's) share of the operations
    summary: str
    multiprocess: bool = False  # run by a process pool whose workers each run ``body`` over chunks
    chunk: int | None = None    # operations per pool task (None: --concurrency)
    warning: str | None = None


PATTERNS: dict[str, Pattern] = {p.name: p for p in [
    Pattern("sync", sync, "session.execute, one request at a time per thread (--threads)"),
    Pattern("future_batches", future_batches, "execute_async, wait for every batch of --concurrency"),
    Pattern("future_full_pipeline", future_full_pipeline,
            "execute_async with a queue of --concurrency: wait for the oldest"),
    Pattern("future_full_throttle", future_full_throttle, "execute_async for all ops, then wait for all",
            warning="future_full_throttle keeps every op's future (and result) in memory at once; "
                    "memory grows with -n (see max_rss_mb)"),
    Pattern("callback_full_pipeline", callback_full_pipeline,
            "--concurrency callback chains on the event loop"),
    Pattern("execute_concurrent", execute_concurrent, "the driver's execute_concurrent helper"),
    Pattern("async_errback", async_errback,
            "callbacks + errbacks, in-flight limit, bounded retries, lost requests counted"),
    Pattern("multiprocess_execute", sync,
            "a process pool (--processes), one Session per worker after start, tasks of 10 sync executes",
            multiprocess=True, chunk=10),
    Pattern("multiprocess_concurrent", execute_concurrent,
            "a process pool, tasks of --concurrency requests through execute_concurrent per worker",
            multiprocess=True),
]}


def run(body: Callable[[Context, range], None], ctx: Context, num_ops: int, threads: int = 1) -> None:
    """Run ``body`` over operations ``0..num_ops-1``, split between ``threads`` threads."""
    if threads <= 1:
        body(ctx, range(num_ops))
        return
    failures: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            body(ctx, range(k, num_ops, threads))
        except BaseException as exc:  # pragma: no cover - a bug in a pattern
            failures.append(exc)
            ctx.stop.set()

    pool = [threading.Thread(target=worker, args=(k,), name=f"pattern-{k}") for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        ctx.wait(t.join)
    if failures:
        raise failures[0]
