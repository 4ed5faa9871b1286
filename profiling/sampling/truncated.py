"""Stacks that py-spy did not unwind to their thread's entry point.

Reading a running process without pausing it (``--nonblocking``), py-spy
sometimes gets only the innermost frames: a generator that the driver's
compiled code resumes (the query plan's ``make_query_plan``, a pattern's
statement generator) is seen just after it yielded, with no caller, and a
callback run from compiled code is seen without the frames above it. Such a
stack lacks the region markers that enclose it, so classifying it as its
thread's base category (``socket`` on the event loop) moves CPU out of the
regions (request, dispatch, row_factory...) into socket.

The missing frames are those of the same function's complete stacks in the same
thread: a truncated stack takes the categories in force at its outermost
function in those stacks, in their proportions. A truncated stack whose
function never appears in a complete stack is left out (its CPU is split by
the thread's other samples). Only threads that have complete stacks (rooted at
a thread entry point) are judged; a recording without those is taken as is.
"""

from __future__ import annotations

import collections
from typing import Callable, Iterable

from .stacks import Frame, Stack

#: Outermost frames of a complete stack: a ``threading`` thread's bootstrap, the main
#: module (run as ``python -m`` or as a script).
_ENTRY_FUNCS = frozenset({"_run_module_as_main", "<module>"})

Key = tuple[str, str, str]  # thread id, function, file


def is_entry(frame: Frame) -> bool:
    return frame.func in _ENTRY_FUNCS or (frame.short == "_bootstrap" and frame.file.endswith("threading.py"))


def _key(tid: str, frame: Frame) -> Key:
    return tid, frame.func, frame.file


class Completion:
    """The categories in force at each function of each thread's complete stacks."""

    def __init__(self, stacks: Iterable[Stack], parse: Callable[[str], Frame],
                 path_categories: Callable[[Stack], list[str]]) -> None:
        self.rooted: set[str] = set()
        self.at: dict[Key, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        for stack in stacks:
            frames = [parse(f) for f in stack.frames]
            if not frames or not is_entry(frames[0]):
                continue
            self.rooted.add(stack.tid)
            for frame, category in zip(frames, path_categories(stack)):
                self.at[_key(stack.tid, frame)][category] += stack.count

    def truncated(self, stack: Stack, frames: list[Frame]) -> bool:
        """Is this stack cut short (its thread has complete stacks, it is not one)?"""
        return bool(frames) and stack.tid in self.rooted and not is_entry(frames[0])

    def categories(self, stack: Stack, frames: list[Frame]) -> list[tuple[str, float]] | None:
        """The categories (with weights summing to 1) of a truncated stack's missing frames,
        None if its outermost function is in none of its thread's complete stacks."""
        seen = self.at.get(_key(stack.tid, frames[0]))
        if not seen:
            return None
        total = sum(seen.values())
        return [(category, n / total) for category, n in seen.items()]
