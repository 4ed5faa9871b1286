"""py-spy's raw collapsed stacks, read: a :class:`Stack` per line, its frames parsed one by one
(:func:`parse_frame`) by what classifies them (:mod:`profiling.sampling.categories`,
:mod:`profiling.sampling.syscalls`, :mod:`profiling.sampling.truncated`, :mod:`profiling.sampling.foreign`).

A line is ``frame;frame;...;leaf count`` (``--format raw``), with a ``thread (tid): name`` frame
(``--threads``) and, with ``--subprocesses``, ``process pid:"cmdline"`` frames in front.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Iterator

_PY_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*\.pyx?):(?P<line>\d+)\)$")
_NATIVE_FRAME = re.compile(r"^(?P<func>.*) \((?P<lib>[^()]*)\)$")
_THREAD = re.compile(r"^thread \((?P<tid>\w+)\): (?P<name>.*)$")


@dataclass(frozen=True)
class Frame:
    func: str
    file: str  # a .py file or a shared library
    python: bool
    line: int = 0

    @property
    def short(self) -> str:
        return self.func.rsplit(".", 1)[-1]


def parse_frame(text: str) -> Frame:
    m = _PY_FRAME.match(text)
    if m:
        return Frame(m["func"], m["file"], True, int(m["line"]))
    m = _NATIVE_FRAME.match(text)
    if m:
        return Frame(m["func"], m["lib"], False)
    return Frame(text, "", False)


@dataclass
class Stack:
    process: str | None
    tid: str
    thread: str  # thread name
    frames: list[str]  # root first, as py-spy wrote them
    count: int


def parse_raw(lines: Iterable[str]) -> Iterator[Stack]:
    """Stacks of a py-spy ``--format raw`` file (made with ``--threads``)."""
    for line in lines:
        line = line.rstrip("\n")
        head, _, count = line.rpartition(" ")
        if not head or not count.isdigit():
            continue
        parts = head.split(";")
        process = None
        k = 0
        while k < len(parts) and not _THREAD.match(parts[k]):
            if parts[k].startswith("process "):
                process = parts[k]
            k += 1
        if k == len(parts):  # no thread frame: not made with --threads
            yield Stack(process, "", "", parts, int(count))
            continue
        m = _THREAD.match(parts[k])
        assert m
        yield Stack(process, m["tid"], m["name"], parts[k + 1:], int(count))
