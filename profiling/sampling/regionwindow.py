"""Which side of a region's clock readings a sample in a region wrapper falls on.

The instrumented method charges a region with the CPU between its two clock
readings (``t0 = _clock()`` and ``dt = _clock() - t0`` in
:func:`profiling.timing.instrument._region`). The wrapper's own work before the
first reading (finding the thread's state) and after the second (adding up)
runs in the wrapper's frame, so a sampler sees it under the region's marker,
but the clocks charge it to the enclosing region (or to the thread's base
category). Each region call moves that work from the region to its parent:
a few percent of the CPU with a dozen region calls per request, and always
from inner regions (encode, timers, deserialization) to outer ones (request,
framing, socket). So a sample whose innermost marker frame stands on a line
outside the readings belongs to the enclosing category, and one on a reading
belongs half to each side: the reading is taken inside a system call (a
thread's CPU clock is not served by the vDSO), part of whose time the clocks
put on each side, and a sample cannot tell which part it fell in.

The wrapper's lines are read from the recorded source file (as py-spy named
it), so a recording made with another version of the wrapper is read with
its own line numbers.
"""

from __future__ import annotations

import functools
import linecache
import re

INSIDE, OUTSIDE, READING = "inside", "outside", "reading"

_FIRST_READING = re.compile(r"^\s*t0\s*=\s*_clock\(\)\s*$")
_SECOND_READING = re.compile(r"^\s*dt\s*=\s*_clock\(\)\s*-\s*t0\s*$")
_DEF = re.compile(r"^\s*def ")


@functools.lru_cache(maxsize=64)
def wrapper_lines(file: str) -> tuple[int, int, int, int] | None:
    """The wrapper's first line, its two clock readings and its last line in ``file``;
    None if the file cannot be read or has not exactly one pair of readings."""
    lines = linecache.getlines(file)
    first = [n for n, text in enumerate(lines, 1) if _FIRST_READING.match(text)]
    second = [n for n, text in enumerate(lines, 1) if _SECOND_READING.match(text)]
    if len(first) != 1 or len(second) != 1 or first[0] >= second[0]:
        return None
    start = next((n for n in range(first[0] - 1, 0, -1) if _DEF.match(lines[n - 1])), None)
    if start is None:
        return None
    indent = len(lines[start - 1]) - len(lines[start - 1].lstrip())
    end = second[0]
    for n in range(second[0] + 1, len(lines) + 1):
        text = lines[n - 1]
        if text.strip() and len(text) - len(text.lstrip()) <= indent:
            break
        if text.strip():
            end = n
    return start, first[0], second[0], end


def side(file: str, line: int, innermost: bool) -> str:
    """Where a marker frame at ``file:line`` stands relative to its region's readings.

    ``innermost``: no Python frame below it. A frame with a callee is inside (the
    wrapped call, which py-spy may show on a stale line when it reads a running
    thread's stack); so is one whose source cannot be read or whose line is not in
    the wrapper (no evidence either way).
    """
    lines = wrapper_lines(file)
    if not innermost or lines is None or not lines[0] <= line <= lines[3]:
        return INSIDE
    if line in (lines[1], lines[2]):
        return READING
    return INSIDE if lines[1] < line < lines[2] else OUTSIDE
