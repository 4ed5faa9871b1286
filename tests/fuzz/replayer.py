"""Replays regression scripts, each in a process of its own, forked from one that imported the modules
they use once: under the sanitizers starting an interpreter and importing the driver and the compiled
modules costs far more than most replays.

Run as ``python -m tests.fuzz.replayer``: it reads a script's path per line on stdin and answers one
JSON line per script, ``{"status": ..., "stdout": ..., "stderr": ...}``, where ``status`` is the
replay's exit status, or minus the signal that ended it (a crash, a sanitizer's abort), or None if it
ran past its time and was killed. Only the forked process runs the script: a crash ends that process
alone, never this one.
"""

from __future__ import annotations

import faulthandler
import json
import os
import runpy
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

#: Seconds a replay may take before it is killed.
REPLAY_TIMEOUT_S = 120.0

#: What the scripts import, imported once here so that each forked replay finds it loaded.
PRELOADED = ["cassandra.cluster", "cassandra.protocol", "cassandra.query", "cassandra.segment",
             "cassandra.connection", "cassandra.cqltypes", "pyfactories", "pyfactories.decoding",
             "pyfactories.rows._rows", "pyfactories.rows._rows_py", "pyfactories.rows._typed_py",
             "pyfactories.binding._binding", "pyfactories.binding._binding_py",
             "pyfactories.connection._framing", "pyfactories.connection._framing_py",
             "pyfactories.futures._futures", "pyfactories.futures._futures_py", "tests.result_bodies"]


def _replay_in_child(script: Path, out: int, err: int) -> None:
    """In the forked process: the script as ``python script`` would run it, its output to the files."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    status = 0
    try:
        sys.argv = [str(script)]
        sys.path.insert(0, str(script.parent))
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - the replay's failure, reported as python would
        traceback.print_exc()
        status = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(status)


def _wait(pid: int, timeout: float) -> int | None:
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.01)


def replay(script: Path, timeout: float = REPLAY_TIMEOUT_S) -> dict[str, object]:
    """``script`` replayed in a forked process: its status and what it printed."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _replay_in_child(script, out.fileno(), err.fileno())
        status = _wait(pid, timeout)
        texts = []
        for f in (out, err):
            f.seek(0)
            texts.append(f.read().decode("utf-8", "replace"))
    return {"status": status, "stdout": texts[0], "stderr": texts[1]}


def main() -> None:
    faulthandler.enable()  # a crashing replay prints its Python stack (the forked process inherits it)
    for name in PRELOADED:
        try:
            __import__(name)
        except ImportError:  # not on this driver line: a replay that needs it imports it and fails there
            pass
    print(json.dumps({"ready": os.getpid()}), flush=True)
    for line in sys.stdin:
        print(json.dumps(replay(Path(line.strip()))), flush=True)


if __name__ == "__main__":
    main()
