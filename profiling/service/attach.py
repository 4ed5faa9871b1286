"""``python -m profiling attach --pid PID --duration SECONDS``: where a running service's
client CPU goes, without touching its code.

The sampling method only (there is nothing to instrument from outside): py-spy samples
the process for the window, and each thread's samples are weighed by the CPU the kernel
says the thread used in that window (``/proc/PID/task/*/schedstat`` and ``stat`` read
before, during and after), as the harness does for its own runs. Stacks are classified
by :mod:`profiling.sampling.foreign` (no markers in a process the harness did not start).

Checked first, each with its own message (exit 2): the PID exists, the process loaded
the driver (a ``cassandra`` module among its mapped files, or in its Python stacks for a
driver without compiled modules), and py-spy may read its memory (ptrace permission).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import Any

from ..sampling import pyspy
from ..sampling.foreign import KNOWN_FACTORIES, FactoryRule
from ..timing import procfs
from .results import ServiceError, add_samples, base_row, write_reports

NOT_NATIVE = ("without --native the driver's compiled decoding leaves no Python frame: deserialization counts "
              "in socket here, with the event loop's own work (--native shows it, but py-spy then pauses the "
              "service for every sample)")
PERMISSION_WORDS = ("Permission denied", "Operation not permitted", "EPERM", "ptrace")


def permission_hint(pid: int) -> str:
    return (f"no permission to read process {pid}'s memory (ptrace): run the profiler as the service's "
            "user or as root (sudo), or allow it with `sudo sysctl kernel.yama.ptrace_scope=0`, or start "
            "the service under `python -m profiling record -- COMMAND`")


def check_target(pid: int) -> None:
    """Raise :class:`ServiceError` unless ``pid`` is a process py-spy can read that uses the driver."""
    if not procfs.exists(pid):
        raise ServiceError(f"no process with PID {pid}")
    if pid == os.getpid():
        raise ServiceError("the profiler cannot attach to itself")
    try:
        with open(f"/proc/{pid}/maps") as f:
            mapped = f.read()
    except PermissionError as exc:
        raise ServiceError(permission_hint(pid)) from exc
    except OSError as exc:
        raise ServiceError(f"process {pid} ended: {exc}") from exc
    if "/cassandra/" in mapped:
        return
    dump = _dump(pid)
    if "/cassandra/" not in dump:
        raise ServiceError(f"process {pid} ({procfs.cmdline(pid)[:120]}) does not use the Cassandra driver: "
                           "no cassandra module is loaded in it")


def _dump(pid: int) -> str:
    """``py-spy dump`` of the process's Python stacks (a driver without compiled modules)."""
    exe = pyspy.pyspy_executable()
    if exe is None:
        raise ServiceError("py-spy is not installed: pip install py-spy")
    try:
        done = subprocess.run([exe, "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired as exc:
        raise ServiceError(f"py-spy dump of process {pid} did not finish in 30 s") from exc
    text = done.stdout + done.stderr
    if done.returncode != 0 and any(w in text for w in PERMISSION_WORDS):
        raise ServiceError(permission_hint(pid))
    if done.returncode != 0 and "python" in text.lower():
        raise ServiceError(f"process {pid} ({procfs.cmdline(pid)[:120]}) is not a Python process py-spy can "
                           f"read: {text.strip().splitlines()[0] if text.strip() else done.returncode}")
    return text


def attach(pid: int, duration: float, out: str, rate: int, factory_names: list[str], command: str,
           native: bool = False) -> int:
    if duration <= 0:
        raise ServiceError("--duration must be positive")
    check_target(pid)
    os.makedirs(out, exist_ok=True)
    name = f"attach-{pid}"
    raw = os.path.join(out, f"{name}.raw.txt")
    try:
        spy = pyspy.PySpy(pid, raw, rate=rate, native=native, nonblocking=not native)
        spy.wait_sampling()
    except RuntimeError as exc:
        message = str(exc)
        raise ServiceError(permission_hint(pid) if any(w in message for w in PERMISSION_WORDS)
                           else f"py-spy could not sample process {pid}: {message}") from exc
    watch = procfs.ThreadWatch(pid)  # the kernel's clocks over the window py-spy samples
    t0 = time.monotonic()
    interrupted = ended = False
    print(f"[profiling] sampling process {pid} ({procfs.cmdline(pid)[:80]}) for {duration:g} s at {rate} Hz "
          "(Ctrl-C ends the window early)", flush=True)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        while time.monotonic() - t0 < duration:
            if not procfs.exists(pid) or spy.proc.poll() is not None:
                ended = True
                break
            time.sleep(min(0.2, max(0.0, duration - (time.monotonic() - t0))))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        signal.signal(signal.SIGINT, previous)
        watch.stop()
        wall = time.monotonic() - t0
        print(f"[profiling] window ended after {wall:.1f} s; classifying the samples", flush=True)
        problem = spy.stop()
    row = base_row("attach", procfs.cmdline(pid) or f"pid {pid}")
    row.update(pid=pid, wall_s=wall, client_cpu_s=watch.process_ns() / 1e9, interrupted=interrupted or ended)
    if ended:
        row["warnings"].append(f"process {pid} ended {wall:.1f} s into the window")
    if problem or not os.path.exists(raw):
        row["failed"] = f"no py-spy samples: {problem}"
        row["shares"] = {"instrumented": None, "sampled": None}
    else:
        add_samples(row, raw, out, name, watch.threads(), watch.process_ns(),
                    FactoryRule(KNOWN_FACTORIES | frozenset(factory_names)), rate, wall * 1e9)
        if not native:
            row["warnings"].append(NOT_NATIVE)
    write_reports([row], out, {"command": command, "pid": pid, "window": f"{wall:.1f} s",
                               "py-spy": f"{rate} Hz", "ops": "not known from outside"})
    return 130 if interrupted else (1 if row.get("failed") else 0)


def short_names(names: list[str] | None) -> list[str]:
    """``--row-factory`` values as function names (``module:function`` or dotted names)."""
    return [n.replace(":", ".").rsplit(".", 1)[-1] for n in names or []]


def run_attach(args: Any, command: str) -> int:
    return attach(args.pid, args.duration, args.out, args.rate, short_names(args.row_factory), command,
                  native=args.native)
