"""Pinning processes to CPUs for a run (``bench_e2e --client-cpus/--server-cpus``), and undoing it."""

from __future__ import annotations

import os
from typing import Sequence


def parse_cpus(text: str) -> list[int]:
    """``"1"`` or ``"0,1"`` or ``"0-1"`` -> CPU numbers."""
    cpus: set[int] = set()
    for part in text.split(","):
        lo, dash, hi = part.strip().partition("-")
        if not lo.isdigit() or (dash and not (hi.isdigit() and int(hi) >= int(lo))):
            raise ValueError(f"not a CPU list: {text!r} (e.g. 1 or 0,1 or 0-1)")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return sorted(cpus)


def pin(pids: Sequence[int], cpus: Sequence[int] | None) -> dict[int, set[int]]:
    """Keep every thread of ``pids`` (and threads they start from now on) on ``cpus``; the old sets by thread.

    On a small machine the client's two threads (the caller and the driver's
    event loop) and the server share the CPUs, and a large part of a
    synchronous query's client CPU is spent waking threads across CPUs.
    Pinning the client, or client and server apart, shows the same comparison
    without most of that part.
    """
    saved: dict[int, set[int]] = {}
    if not cpus:
        return saved
    for pid in pids:
        for tid in _threads(pid):
            try:
                saved[tid] = os.sched_getaffinity(tid)
                os.sched_setaffinity(tid, set(cpus))
            except (ProcessLookupError, PermissionError):  # ended meanwhile, or not ours
                pass
    return saved


def unpin(saved: dict[int, set[int]], pids: Sequence[int] = ()) -> None:
    """Give every thread :func:`pin` moved its old CPU set back, and every thread of ``pids`` started
    while they were pinned (it inherited the pinning: a JVM starts threads all the time, the driver its
    event loop) its process's old set."""
    for tid, cpus in saved.items():
        try:
            os.sched_setaffinity(tid, cpus)
        except (ProcessLookupError, PermissionError):
            pass
    for pid in pids:
        before = saved.get(pid)  # the main thread's id is the process's
        for tid in _threads(pid) if before else []:
            if tid not in saved:
                try:
                    os.sched_setaffinity(tid, before)
                except (ProcessLookupError, PermissionError):
                    pass


def _threads(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return [pid]
