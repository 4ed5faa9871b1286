"""Awaitable requests on an asyncio loop (the standard loop, uvloop, any running loop).

    import pyfactories
    pyfactories.enable(cluster)                          # makes every session's requests awaitable
    session = cluster.connect("ks")

    async def main():
        result = await session.execute_async(query, params)  # the driver's ResultSet (an AsyncResultSet)
        async for row in result:                          # later pages fetched without blocking the loop
            ...
        prepared = await pyfactories.aio.prepare(session, "SELECT ... WHERE k = ?")

The driver's IO thread still does the socket work; the awaiting task's loop finishes the asyncio
futures, woken once for the requests that finished together (``pyfactories.aio._aio_py``, compiled
in ``pyfactories.aio._aio``). Cancelling the awaiting task ends the request the way the driver's client
timeout does (see ``docs/asyncio.md``).

What ``install`` changes, on one session object: its ``_create_response_future`` gives the futures the
driver builds (every request with ``enable(..., futures=False)``; batches and the
other requests ``pyfactories.futures`` leaves to the driver) the class :class:`AwaitableResponseFuture`,
the driver's ``ResponseFuture`` with ``__await__`` and nothing else. ``pyfactories.futures``'
``LeanResponseFuture`` is awaitable by itself. ``uninstall`` (``pyfactories.disable``) puts it back.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any, AsyncIterator, Generator

from cassandra.cluster import ResponseFuture, ResultSet

from .._impl import COMPILED
from .._sessions import has_own, put_back

if COMPILED:
    from . import _aio as _spec
else:
    from . import _aio_py as _spec

__all__ = ["AsyncResultSet", "AwaitableResponseFuture", "AwaitableCreate", "result", "prepare", "pages",
           "fetch_next_page", "install", "uninstall", "is_installed"]


class AsyncResultSet(ResultSet):
    """The driver's ``ResultSet`` (every attribute and method the same), also iterable with ``async for``:
    the rows of the current page, then of each next page, fetched without blocking the loop."""

    def __aiter__(self) -> AsyncIterator[Any]:
        return _rows(self)


async def _rows(result_set: ResultSet) -> AsyncIterator[Any]:
    """The rows ``iter(result_set)`` gives, in the same order, each later page awaited."""
    if result_set._list_mode:
        for row in result_set._current_rows:
            yield row
        return
    while True:
        for row in result_set._current_rows:
            yield row
        if not result_set.response_future.has_more_pages:
            result_set._current_rows = []  # as the driver's iterator leaves it
            return
        await fetch_next_page(result_set)


def await_response(future: ResponseFuture) -> Generator[Any, None, AsyncResultSet]:
    """``future.__await__()``: the request's :class:`AsyncResultSet`, or its exception."""
    return _spec.result_of(future, AsyncResultSet)


class Awaiting:
    """Any request future of the driver, awaitable (``await Awaiting(future)``: its :class:`AsyncResultSet`)."""

    __slots__ = ("future",)

    def __init__(self, future: ResponseFuture) -> None:
        self.future = future

    def __await__(self) -> Generator[Any, None, AsyncResultSet]:
        return _spec.result_of(self.future, AsyncResultSet)


async def result(future: ResponseFuture) -> AsyncResultSet:
    """``await pyfactories.aio.result(future)``: what ``future.result()`` gives, without blocking the loop,
    for any request future of the driver (of a session that is not enabled too). A coroutine: tasks,
    ``gather`` and ``TaskGroup`` take it on every Python."""
    return await Awaiting(future)


class AwaitableResponseFuture(ResponseFuture):
    """The driver's ``ResponseFuture``, awaitable: a future the driver built gets this class (on the one
    session ``install`` is given); nothing else differs."""

    __await__ = await_response


AwaitableCreate = _spec.AwaitableCreate


async def fetch_next_page(result_set: ResultSet) -> None:
    """``result_set.fetch_next_page()`` without blocking the loop: the next page becomes its current rows
    (none when it has no more pages)."""
    future = result_set.response_future
    if future.has_more_pages:
        future.start_fetching_next_page()
        page = await result(future)
        result_set._current_rows = page._current_rows
    else:
        result_set._current_rows = []


async def pages(result_set: ResultSet) -> AsyncIterator[list]:
    """Each page's rows (``result_set.current_rows``), from the current one on, the next fetched only when
    asked for."""
    while True:
        yield result_set.current_rows
        if not result_set.response_future.has_more_pages:
            return
        await fetch_next_page(result_set)


async def prepare(session: Any, query: str, custom_payload: Any = None, keyspace: Any = None) -> Any:
    """``session.prepare(query, custom_payload, keyspace)`` (the session's own: an enabled session's gives
    statements bound in C) on a thread of the loop's default executor, the loop running meanwhile."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, partial(session.prepare, query, custom_payload, keyspace))


def is_installed(session: Any) -> bool:
    return has_own(session, "_create_response_future", AwaitableCreate)


def install(session: Any) -> bool:
    """The futures ``session``'s driver method builds are :class:`AwaitableResponseFuture` s from now on.
    Install it before ``pyfactories.futures`` (whose method then hands it what it does not build)."""
    if not is_installed(session):
        session._create_response_future = AwaitableCreate(session, AwaitableResponseFuture)
    return True


def uninstall(session: Any) -> None:
    """``session._create_response_future`` is what it was before ``install`` (when ours is the outermost)."""
    put_back(session, "_create_response_future", AwaitableCreate)
