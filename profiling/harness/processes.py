"""The processes of one run: reading the child's lines, waiting for it, and ending its process group.

The harness starts each run's child with ``start_new_session``, so the child leads a process group
that also holds what it starts (a pool's forkserver and workers). Ending that group ends all of
them, even after the child itself exited; the child is not reaped before that, so its PID (the
group's ID) cannot have been reused by then.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time


def reader(child: subprocess.Popen[str]) -> queue.Queue[str | None]:
    """The child's stdout, line by line, on a queue (None at its end)."""
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def wait_exited(proc: subprocess.Popen[str], timeout: float) -> int | None:
    """Wait up to ``timeout`` for ``proc`` to exit, without reaping it; its exit status
    (minus the signal that ended it), or None if it still runs."""
    deadline = time.monotonic() + timeout
    while proc.returncode is None:
        try:
            info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            break
        if info is not None:
            return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)
    return proc.returncode


def kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the process group ``proc`` leads, unless ``proc`` was already reaped."""
    if proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
