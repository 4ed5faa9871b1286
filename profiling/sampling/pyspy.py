"""py-spy attached to a running process: ``py-spy record --pid``, stopped with SIGINT.

It writes raw collapsed stacks that :mod:`profiling.sampling.categories` parses and classifies.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading


def pyspy_executable() -> str | None:
    """py-spy next to this interpreter (the venv's), else on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "py-spy")
    return here if os.access(here, os.X_OK) else shutil.which("py-spy")


class PySpy:
    """``py-spy record --pid`` of a running process, stopped with SIGINT (it then writes)."""

    def __init__(self, pid: int, out: str, *, rate: int = 200, native: bool = True,
                 subprocesses: bool = False, nonblocking: bool = False, gil: bool = False) -> None:
        exe = pyspy_executable()
        if exe is None:
            raise RuntimeError("py-spy is not installed: pip install py-spy")
        self.out = out
        cmd = [exe, "record", "--pid", str(pid), "--format", "raw", "--full-filenames", "--threads",
               "--rate", str(rate), "--output", out]
        if native:
            cmd.append("--native")
        if subprocesses:
            cmd.append("--subprocesses")
        if nonblocking:
            cmd.append("--nonblocking")
        if gil:
            cmd.append("--gil")
        self.messages: list[str] = []
        self._sampling = threading.Event()
        # Own session: a Ctrl-C in the terminal reaches the harness, which stops py-spy itself.
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, start_new_session=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.messages.append(line.rstrip())
            if "Sampling process" in line:
                self._sampling.set()
        self._sampling.set()

    def wait_sampling(self, timeout: float = 20.0) -> None:
        """Block until py-spy samples; raise with its message if it gave up."""
        self._sampling.wait(timeout)
        if self.proc.poll() is not None or not any("Sampling process" in s for s in self.messages):
            self.kill()
            raise RuntimeError("py-spy could not attach: " + " | ".join(self.messages[-3:]))

    def stop(self, timeout: float = 60.0) -> str | None:
        """Stop sampling and wait for the file; return a problem, or None."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return "py-spy did not stop in time"
        self._reader.join(5)
        self._close()
        if not os.path.exists(self.out):
            return "py-spy wrote nothing: " + " | ".join(self.messages[-3:])
        return None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(5)
        self._close()

    def _close(self) -> None:
        if self.proc.stdout and not self._reader.is_alive():
            self.proc.stdout.close()
