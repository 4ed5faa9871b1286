"""Every crash or divergence the fuzzers (or a reviewer) found, each replayed in a process of its own.

A file in ``regressions/`` is a script that reproduces one finding against the compiled module and
checks the answer against the pure-Python twin or the driver with plain ``assert``; it prints ``ok``
last. A crash (a segfault, an abort, a sanitizer report) kills only that process, and shows here as
its signal or exit status with what it printed: it cannot hide in, or take down, the test runner.
Each replay is forked from a process that imported the driver and the compiled modules once
(:mod:`tests.fuzz.replayer`): under the sanitizers that start costs more than the replay.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((Path(__file__).parent / "regressions").glob("*.py"))


def test_there_are_regressions():
    assert len(SCRIPTS) >= 3


class Replayer:
    """A :mod:`tests.fuzz.replayer` process of this test process's own: one script at a time."""

    def __init__(self):
        env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONFAULTHANDLER="1")
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.fuzz.replayer"], cwd=ROOT, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.said = []
        assert "ready" in self._answer(), "the replayer did not start"

    def _answer(self):
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError(f"the replayer ended (exit status {self.proc.wait()}) after {self.said}")
        return json.loads(line)

    def replay(self, script):
        self.said.append(script.stem)
        self.proc.stdin.write(f"{script}\n")
        self.proc.stdin.flush()
        return self._answer()

    def close(self):
        self.proc.stdin.close()
        try:
            assert self.proc.wait(30) == 0
        finally:
            self.proc.stdout.close()


@pytest.fixture(scope="module")
def replayer():
    r = Replayer()
    yield r
    r.close()


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_replayed_in_a_process_of_its_own(script, replayer):
    done = replayer.replay(script)
    said = f"exit status {done['status']}\n--- stdout\n{done['stdout']}\n--- stderr\n{done['stderr']}"
    assert done["status"] == 0, said
    assert done["stdout"].strip().splitlines()[-1:] == ["ok"], said


def test_a_crash_or_a_failure_ends_only_its_own_replay(replayer, tmp_path):
    crash, failure = tmp_path / "crash.py", tmp_path / "failure.py"
    crash.write_text("import ctypes\nprint('before', flush=True)\nctypes.string_at(0)\n")
    failure.write_text("import sys\nprint('partial')\nassert 1 == 2, 'the answer differs'\n")
    crashed = replayer.replay(crash)
    # a signal (minus its number), or the sanitizer's own exit status where it handles the signal
    assert crashed["status"] != 0 and crashed["stdout"] == "before\n", crashed
    # faulthandler's report, or the sanitizer's where it handles the signal
    assert "Segmentation fault" in crashed["stderr"] or "SEGV" in crashed["stderr"], crashed
    failed = replayer.replay(failure)
    assert failed["status"] == 1 and failed["stdout"] == "partial\n", failed
    assert "AssertionError: the answer differs" in failed["stderr"], failed
    ok = replayer.replay(SCRIPTS[0])
    assert ok["status"] == 0 and ok["stdout"].strip().splitlines()[-1] == "ok", ok
