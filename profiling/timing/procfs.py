"""Another process's CPU from the kernel (``/proc/PID``): what :mod:`profiling.service.attach` and
:mod:`profiling.service.record` weigh py-spy's samples with, as the harness does for its own
children (``instrument._threads_cpu``), but read from outside.

A :class:`ThreadWatch` reads every thread's ``schedstat`` (CPU ns, precise) and ``stat``
(kernel ticks) now and then while the process runs and keeps each thread's last reading,
so the CPU of a thread that ended before the window did is not lost.
"""

from __future__ import annotations

import os
import threading
from typing import Any

_TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 1e7


class ProcessGone(Exception):
    pass


def exists(pid: int) -> bool:
    return pid > 0 and os.path.isdir(f"/proc/{pid}")


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def mapped_files(pid: int) -> set[str]:
    """Files mapped into the process (its shared libraries, compiled modules among them)."""
    try:
        with open(f"/proc/{pid}/maps") as f:
            return {line.split(None, 5)[5].strip() for line in f if len(line.split(None, 5)) == 6}
    except OSError:
        return set()


def process_cpu_ns(pid: int) -> float:
    """User plus system CPU of every thread the process ever had (clock ticks)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError as exc:
        raise ProcessGone(str(exc)) from exc
    return (int(fields[11]) + int(fields[12])) * _TICK_NS


def task_cpu(base: str) -> tuple[int, int, float]:
    """One thread's clocks from its ``/proc/.../task/TID`` folder: CPU ns (schedstat, precise), ns
    it waited runnable for a core (schedstat), and its kernel part in ns (stat's clock ticks).
    OSError (or ValueError, IndexError) when the thread just ended."""
    with open(f"{base}/schedstat") as f:
        ns, queued = (int(v) for v in f.read().split()[:2])
    with open(f"{base}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return ns, queued, int(fields[12]) * _TICK_NS


def threads_cpu(pid: int) -> dict[str, dict[str, Any]]:
    """Per live thread, by OS thread id: its OS name, CPU ns (schedstat) and kernel part, the
    time it waited, runnable, for a core (schedstat's second field) and how often it was
    preempted (switched out while runnable)."""
    out: dict[str, dict[str, Any]] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        base = f"/proc/{pid}/task/{tid}"
        try:
            ns, queued, sys_ns = task_cpu(base)
            with open(f"{base}/comm") as f:
                name = f.read().strip()
            preempted = _preemptions(base)
        except (OSError, ValueError, IndexError):
            continue  # the thread just ended
        out[tid] = {"name": name, "ns": ns, "sys_ns": sys_ns, "queued_ns": queued, "preempted": preempted}
    return out


def _preemptions(base: str) -> int:
    """How often the thread was switched out while it could still run (``nonvoluntary_ctxt_switches``)."""
    with open(f"{base}/status") as f:
        for line in f:
            if line.startswith("nonvoluntary_ctxt_switches:"):
                return int(line.split()[1])
    return 0


class ThreadWatch:
    """Each thread's last CPU reading, polled every ``period`` seconds until :meth:`stop`."""

    def __init__(self, pid: int, period: float = 0.1) -> None:
        self.pid = pid
        self.period = period
        self.start = threads_cpu(pid)
        self.last: dict[str, dict[str, Any]] = dict(self.start)
        self.process_start_ns = process_cpu_ns(pid)
        self.process_last_ns = self.process_start_ns
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True, name="pf-threadwatch")
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.wait(self.period):
            self.read()

    def read(self) -> None:
        self.last.update(threads_cpu(self.pid))
        try:
            self.process_last_ns = process_cpu_ns(self.pid)
        except ProcessGone:
            pass

    def stop(self) -> None:
        """Take a last reading and stop polling."""
        self._stop.set()
        self._thread.join(5)
        self.read()

    def threads(self, baseline: bool = True) -> dict[str, dict[str, Any]]:
        """Each thread's CPU since the watch started (``baseline``) or since it started."""
        out = {}
        for tid, t in self.last.items():
            first = self.start.get(tid, {}) if baseline else {}
            out[tid] = {"name": t["name"], **{k: t[k] - first.get(k, 0) for k in ("ns", "sys_ns", "queued_ns", "preempted")}}
        return out

    def process_ns(self) -> float:
        """The process's CPU over the window: the kernel's total, or the threads' sum if larger
        (the total counts in clock ticks)."""
        return max(self.process_last_ns - self.process_start_ns,
                   float(sum(t["ns"] for t in self.threads().values())))
