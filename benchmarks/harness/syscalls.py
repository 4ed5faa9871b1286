"""System calls counted under strace: how often a client enters the kernel per query.

``strace -f -c`` counts every system call of a process and its threads by name. A run's counts include
start-up, connecting and warming up; the calls per query are the difference of two runs' counts over the
difference in queries (:func:`per_query`), as for instructions (:mod:`benchmarks.harness.callgrind`).
Tracing slows every call down, so what depends on timing (how many answers one read finds, how many
writes one wake-up coalesces) may differ from an untraced run: the counts say where a client enters the
kernel, the CPU time says what that costs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from typing import Sequence

#: a row of ``strace -c -U name,calls,errors``: the call's name, its count, its failures (if any)
_ROW = re.compile(r"^([a-z_0-9]+)\s+(\d+)(?:\s+\d+)?$")
_NOT_CALLS = {"total", "syscall"}


def parse(text: str) -> dict[str, int]:
    """``{system call: count}`` from the summary ``strace -c -U name,calls,errors`` writes."""
    found: dict[str, int] = {}
    for line in text.splitlines():
        row = _ROW.match(line.strip())
        if row and row.group(1) not in _NOT_CALLS:
            found[row.group(1)] = found.get(row.group(1), 0) + int(row.group(2))
    return found


def counts(args: Sequence[str], what: str = "the run") -> dict[str, int]:
    """System calls by name (all threads) of ``python <args>`` run under ``strace -f -c``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "strace.out")
        cmd = ["strace", "-f", "-c", "-U", "name,calls,errors", "-o", out, sys.executable, *args]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"strace run failed ({done.returncode}): {done.stderr[-2000:]}")
        with open(out) as f:
            found = parse(f.read())
    if not found:
        raise RuntimeError(f"no system call counts in the strace output of {what}")
    return found


def per_query(runs: dict[int, dict[str, int]]) -> dict[str, float]:
    """System calls per query by name, from ``{queries: counts}`` of two runs."""
    (n1, c1), (n2, c2) = sorted(runs.items())
    return {name: (c2.get(name, 0) - c1.get(name, 0)) / (n2 - n1) for name in sorted(set(c1) | set(c2))}
