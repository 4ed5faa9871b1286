"""Loops that count the wake-ups asked of them from other threads (``call_soon_threadsafe``): the
standard loop and uvloop's."""

from __future__ import annotations

import asyncio

import uvloop


class CountingLoop(asyncio.SelectorEventLoop):
    """The standard loop, counting the wake-ups asked of it from other threads."""

    threadsafe_calls = 0

    def call_soon_threadsafe(self, *args, **kwargs):
        self.threadsafe_calls += 1
        return super().call_soon_threadsafe(*args, **kwargs)


class CountingUvloop(uvloop.Loop):
    """uvloop's loop, counting the same."""

    threadsafe_calls = 0

    def call_soon_threadsafe(self, *args, **kwargs):
        self.threadsafe_calls += 1
        return super().call_soon_threadsafe(*args, **kwargs)


LOOPS = {"asyncio": CountingLoop, "uvloop": CountingUvloop}
