"""Awaiting requests (``pyfactories.aio``) through a real server, on the standard loop and uvloop: rows,
errors and timeouts equal to what a session without pyfactories gives through the usual hand-written
bridge (``add_callbacks`` -> ``loop.call_soon_threadsafe`` -> an asyncio future); pages fetched with
``async for``; cancelled awaits (``wait_for``, ``asyncio.timeout``, ``TaskGroup``) finish every request once
and leave the session working with no stream held; requests finished together wake the loop fewer times
than there are requests. Each on a session with the leaner futures, on one whose futures the driver builds
(``futures=False``), on our connection over the driver's asyncio
reactor, and on the driver's own connection class."""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
import threading
import time
import warnings

import pytest
from cassandra import InvalidRequest, OperationTimedOut
from cassandra.cluster import ResultSet
from cassandra.query import BatchStatement, SimpleStatement

from profiling.cluster import connect, open_cluster
import pyfactories
from pyfactories import _support, aio, binding, futures

from ..aio.loops import LOOPS
from .support import refresh_schema

pytestmark = pytest.mark.integration

KEYSPACE = "aio"  # this module's own keyspace
ROWS = 300
SETTLE_S = 15.0
SELECT_ALL = f"SELECT k, c, v FROM {KEYSPACE}.kv WHERE k = 1"


#: the sessions awaited: their futures (the leaner ones, or the driver's), and their connection class (ours
#: on libev or on the driver's asyncio reactor, or the driver's own libev one)
KINDS = {
    "lean": {"futures": True, "reactor": None, "connection": True},
    "driver-built": {"futures": False, "reactor": None, "connection": True},
    "asyncio-reactor": {"futures": True, "reactor": "asyncio", "connection": True},
    "drivers-connection": {"futures": True, "reactor": None, "connection": False},
}


@pytest.fixture(scope="module")
def sessions(contact):
    """One session of each of :data:`KINDS`, and ``"driver"``: a session without pyfactories."""
    from cassandra.io.asyncioreactor import AsyncioConnection

    clusters, found = [], {}
    try:
        for name, kind in KINDS.items():
            # (in pure Python every session's futures are the driver's)
            lean = kind["futures"] and _support.futures_off() is None
            options = {"connection_class": AsyncioConnection} if kind["reactor"] == "asyncio" else {}
            cluster = open_cluster(contact, protocol_version=5, **options)
            clusters.append(cluster)
            with warnings.catch_warnings():  # in pure Python, the parts that run compiled only say they are off
                warnings.simplefilter("ignore" if _support.rows_off() else "error", RuntimeWarning)
                pyfactories.enable(cluster, futures=lean, connection=kind["connection"])
            found[name] = cluster.connect()
            assert futures.is_installed(found[name]) is lean
            assert pyfactories.status(found[name])["connection"].on is kind["connection"]
            assert type(awaitable_create(found[name])) is aio.AwaitableCreate
        cluster, found["driver"] = connect(contact, protocol_version=5)
        clusters.append(cluster)
        ddl = found["driver"]
        ddl.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}", timeout=60)
        ddl.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.kv (k int, c int, v text, PRIMARY KEY (k, c))", timeout=60)
        insert = ddl.prepare(f"INSERT INTO {KEYSPACE}.kv (k, c, v) VALUES (1, ?, ?)")
        for c in range(ROWS):
            ddl.execute(insert, (c, f"row {c}"))
        for session in found.values():
            refresh_schema(session.cluster)
        yield found
    finally:
        for cluster in clusters:
            cluster.shutdown()


def awaitable_create(session):
    """The session's method that makes the driver's futures awaitable (under the leaner futures' one)."""
    own = vars(session).get("_create_response_future")
    return own.driver if futures.is_installed(session) else own


@pytest.fixture(params=sorted(KINDS))
def ours(request, sessions):
    return sessions[request.param]


@pytest.fixture(params=sorted(LOOPS), ids=sorted(LOOPS))
def run(request):
    """Runs a coroutine to the end on a new loop of each kind (the loop: ``run.loop``)."""
    loop = LOOPS[request.param]()

    def runner(coroutine):
        return loop.run_until_complete(coroutine)

    runner.loop = loop
    yield runner
    loop.run_until_complete(loop.shutdown_default_executor())
    loop.close()


def bridge(response_future):
    """The usual hand-written bridge: an asyncio future of the running loop, finished through
    ``call_soon_threadsafe`` from the request's callbacks; gives the driver's ``ResultSet``."""
    loop = asyncio.get_running_loop()
    waiter = loop.create_future()

    def finish(value, failed):
        if not waiter.done():
            waiter.set_exception(value) if failed else waiter.set_result(ResultSet(response_future, value))

    response_future.add_callbacks(lambda rows: loop.call_soon_threadsafe(finish, rows, False),
                                  lambda exc: loop.call_soon_threadsafe(finish, exc, True))
    return waiter


def settled(sessions_, deadline_s=SETTLE_S):
    """Whether every connection of the sessions has no request in flight and no orphaned stream."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        connections = [c for s in sessions_ for pool in s._pools.values() for c in pool.get_connections()]
        if all(c.in_flight == 0 and not c.orphaned_request_ids for c in connections):
            return True
        time.sleep(0.05)
    return False


def test_rows_are_the_drivers(ours, sessions, run):
    async def main():
        got = await ours.execute_async(SELECT_ALL)
        expected = await bridge(sessions["driver"].execute_async(SELECT_ALL))
        single = await ours.execute_async(f"SELECT v FROM {KEYSPACE}.kv WHERE k = %s AND c = %s", (1, 7))
        return got, expected, single

    got, expected, single = run(main())
    assert isinstance(got, ResultSet) and type(got) is aio.AsyncResultSet
    assert got.column_names == expected.column_names and not got.has_more_pages
    assert len(expected.current_rows) == ROWS and list(got) == list(expected)
    assert single.one().v == "row 7"


def test_the_futures_are_awaitable_on_both_paths(ours, run):
    batch = BatchStatement()
    batch.add(SimpleStatement(f"INSERT INTO {KEYSPACE}.kv (k, c, v) VALUES (2, 1, 'b')"))

    async def main():
        simple, batched = ours.execute_async(SELECT_ALL), ours.execute_async(batch)
        lean = futures.is_installed(ours)
        assert type(simple) is (futures.LeanResponseFuture if lean else aio.AwaitableResponseFuture)
        assert type(batched) is aio.AwaitableResponseFuture  # a batch is the driver's, awaitable too
        return len((await simple).current_rows), (await batched).current_rows

    assert run(main()) == (ROWS, [])


def test_errors_are_the_drivers(ours, sessions, run):
    bad = [("SELECT nothing FROM nowhere.at_all", None),
           (f"SELECT * FROM {KEYSPACE}.kv WHERE k = %s AND c = %s", (1,))]

    async def outcome(session, query, params, through_bridge):
        try:
            future = session.execute_async(query, params)
            await (bridge(future) if through_bridge else future)
        except Exception as exc:  # noqa: BLE001 - compared below
            return type(exc), str(exc), exc.__traceback__ is not None
        raise AssertionError("no error")

    async def main():
        return [(await outcome(ours, q, p, False), await outcome(sessions["driver"], q, p, True)) for q, p in bad]

    found = run(main())
    for got, expected in found:
        assert got == expected
    assert found[0][0][0] is InvalidRequest and found[0][0][2]  # from the server, raised with its traceback
    assert found[1][0][0] is TypeError  # too few values: raised by execute_async itself


def test_the_drivers_timeout_raises_operation_timed_out(ours, sessions, run):
    async def timed_out(session, through_bridge):
        for _ in range(50):  # a tiny timeout: the answer may still come first, now and then
            future = session.execute_async(SELECT_ALL, timeout=0.000001)
            try:
                await (bridge(future) if through_bridge else future)
            except OperationTimedOut as exc:
                # the driver names the connection instead of the host when the answer came as the
                # timeout fired (the request gone from the connection): the same timeout, either way
                # (and scylla-driver names the connection's requests in flight, which vary from run to run)
                text = str(exc).replace("'Connection defunct by heartbeat'", f"'{exc.last_host}'")
                return type(exc), re.sub(r"in_flight=\d+", "in_flight=N", text)
        raise AssertionError("never timed out")

    async def main():
        return await timed_out(ours, False), await timed_out(sessions["driver"], True)

    got, expected = run(main())
    assert got == expected
    assert settled([ours])


def test_async_for_pages_as_the_driver(ours, sessions, run):
    statement = SimpleStatement(SELECT_ALL, fetch_size=7)
    driver_pages = []
    result = sessions["driver"].execute(statement)
    while True:
        driver_pages.append(list(result.current_rows))
        if not result.has_more_pages:
            break
        result.fetch_next_page()

    async def main():
        rows = [row async for row in await ours.execute_async(statement)]
        pages = [list(page) async for page in aio.pages(await ours.execute_async(statement))]
        return rows, pages

    rows, pages = run(main())
    assert pages == driver_pages and len(pages) == -(-ROWS // 7)
    assert rows == [row for page in driver_pages for row in page] == list(sessions["driver"].execute(statement))


def test_paging_does_not_block_the_loop(ours, run):
    """Before each later page is asked for, the connection's IO thread is held until another task of the
    application's loop has run, so the page is surely still on its way when it is awaited: a fetch that
    waited for it on the loop's thread would wait out the hold instead (a page answered before it was
    awaited would prove nothing)."""
    connection_class = ours.cluster.connection_class
    hold_s = 5.0
    waited_out = []  # holds that ended without the other task having run

    def hold_the_io_thread():
        held, release = threading.Event(), threading.Event()

        def stall():
            held.set()
            if not waited_out and not release.wait(hold_s):
                waited_out.append(release)

        connection_class.create_timer(0, stall)
        assert held.wait(30), "the connection's IO thread never ran its timer"
        return release

    async def main():
        ticks = 0
        done = False
        holds = []

        async def tick():
            nonlocal ticks
            while not done:
                ticks += 1
                while holds:
                    holds.pop().set()
                await asyncio.sleep(0)

        ticker = asyncio.ensure_future(tick())
        await asyncio.sleep(0)
        count = 0
        try:
            async for _ in await ours.execute_async(SimpleStatement(SELECT_ALL, fetch_size=3)):
                count += 1
                if count % 3 == 0:  # the page's last row: the next page is asked for after it
                    holds.append(hold_the_io_thread())
        finally:
            done = True
            for release in holds:  # the hold after the last page (no page followed it), or after a failure
                release.set()
            await ticker
        return count, ticks

    count, ticks = run(main())
    assert count == ROWS and not waited_out
    assert ticks >= ROWS // 3  # the other task ran at least once while each page was on its way


def test_tasks_paging_at_once_each_get_every_row_once(ours, run):
    """Many tasks page at once, so a page's answer often reaches its task before the driver has called the
    future's callbacks: every task still gets every row once, in order (a late wake never finishes the
    next page's await)."""
    statement = SimpleStatement(SELECT_ALL, fetch_size=7)

    async def main():
        async def keys():
            return [row.c async for row in await ours.execute_async(statement)]

        return await asyncio.gather(*(keys() for _ in range(20)))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the threads take turns often: the window between outcome and wake is met
    try:
        got = run(main())
    finally:
        sys.setswitchinterval(interval)
    assert got == [list(range(ROWS))] * 20


def finished_once(response_futures):
    """Each future's callbacks and errbacks, counted: [calls] per future."""
    counts = []
    for future in response_futures:
        calls = []
        future.add_callbacks(lambda rows, calls=calls: calls.append("rows"),
                             lambda exc, calls=calls: calls.append(type(exc).__name__))
        counts.append(calls)
    return counts


@pytest.mark.parametrize("how", ["wait_for", "timeout", "task group"])
def test_cancelled_awaits_finish_each_request_once_and_the_session_keeps_working(ours, run, how):
    requests = []

    async def one():
        future = ours.execute_async(SELECT_ALL)
        requests.append(future)
        return await future

    async def fail_soon():
        await asyncio.sleep(0)
        raise ValueError("a sibling failed")

    async def within_a_timeout():
        async with asyncio.timeout(0.0001):
            return await one()

    def timed_out_one():
        return any(isinstance(f._final_exception, OperationTimedOut) for f in requests)

    async def main():
        rounds = 0
        # five rounds, and more while a busy machine answered every request before its task was cancelled
        while rounds < 5 or (not timed_out_one() and rounds < 100):
            rounds += 1
            await asyncio.sleep(0.05 if rounds > 5 else 0)
            if how in ("wait_for", "timeout"):
                bounded = (lambda: asyncio.wait_for(one(), 0.0001)) if how == "wait_for" else within_a_timeout
                results = await asyncio.gather(*(bounded() for _ in range(40)), return_exceptions=True)
                assert all(isinstance(r, (ResultSet, asyncio.TimeoutError)) for r in results), results
            else:
                with pytest.raises(ExceptionGroup):
                    async with asyncio.TaskGroup() as group:
                        for _ in range(40):
                            group.create_task(one())
                        group.create_task(fail_soon())
        counts = finished_once(requests)
        await asyncio.sleep(0.5)
        return counts, len((await ours.execute_async(SELECT_ALL)).current_rows)

    counts, after = run(main())
    assert after == ROWS
    deadline = time.monotonic() + SETTLE_S
    while any(not calls for calls in counts) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(len(calls) == 1 for calls in counts), counts  # none lost, none finished twice
    outcomes = {calls[0] for calls in counts}
    assert outcomes <= {"rows", "OperationTimedOut"} and "OperationTimedOut" in outcomes, outcomes
    assert settled([ours])  # every stream given back (the orphaned ones once their late answer came)


def test_requests_finished_together_wake_the_loop_fewer_times(ours, run):
    many = 300

    statement = f"SELECT v FROM {KEYSPACE}.kv WHERE k = 1 AND c = %s"

    async def one(c):
        return (await ours.execute_async(statement, (c % ROWS,))).one().v  # sent, then awaited at once

    async def main():
        return await asyncio.gather(*(one(c) for c in range(many)))

    assert run(main()) == [f"row {c % ROWS}" for c in range(many)]
    assert 0 < run.loop.threadsafe_calls < many


def test_prepare_does_not_block_and_gives_the_sessions_statement(ours, run):
    query = f"SELECT v FROM {KEYSPACE}.kv WHERE k = ? AND c = ?"

    async def main():
        prepared = await aio.prepare(ours, query)
        return prepared, (await ours.execute_async(prepared, (1, 3))).one().v

    prepared, value = run(main())
    assert value == "row 3" and prepared.query_id == ours.prepare(query).query_id
    assert isinstance(prepared, binding.FastBindPreparedStatement) is (_support.binds_off() is None)


def test_any_request_future_can_be_awaited(sessions, run):
    async def main():
        return len((await aio.result(sessions["driver"].execute_async(SELECT_ALL))).current_rows)

    assert run(main()) == ROWS


def test_disable_takes_it_back(contact, run):
    cluster, session = connect(contact, protocol_version=5)
    try:
        with warnings.catch_warnings():
            # (the one warning says what is off: the rows on some drivers)
            warnings.simplefilter("ignore" if _support.rows_off() or not futures.FUTURES_OURS else "error",
                                  RuntimeWarning)
            pyfactories.enable(session, connection=False)
            pyfactories.enable(session, connection=False)  # again: still one of each, ours under the leaner futures'
        create = awaitable_create(session)
        assert type(create) is aio.AwaitableCreate and create.previous is None
        pyfactories.disable(session)
        assert "_create_response_future" not in vars(session)
        assert not hasattr(session.execute_async(SELECT_ALL), "__await__")
    finally:
        cluster.shutdown()


def test_nothing_is_kept_after_many_awaits(ours, run):
    import gc

    def alive():
        gc.collect()
        return sum(1 for o in gc.get_objects()
                   if type(o) in (futures.LeanResponseFuture, aio.AwaitableResponseFuture, aio.AsyncResultSet))

    before = alive()

    async def main():
        statement = SimpleStatement(SELECT_ALL, fetch_size=50)
        for _ in range(20):
            await asyncio.gather(*(ours.execute_async(f"SELECT v FROM {KEYSPACE}.kv WHERE k = 1 AND c = 1")
                                   for _ in range(50)))
            assert len([row async for row in await ours.execute_async(statement)]) == ROWS
        # one await given up (unless a busy machine had the answer before the task first ran)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(ours.execute_async(SELECT_ALL), 0.00001)

    run(main())
    deadline = time.monotonic() + SETTLE_S
    while alive() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive() <= before
