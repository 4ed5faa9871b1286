"""Every crash or divergence the fuzzers (or a reviewer) found, each replayed in a process of its own.

A file in ``regressions/`` is a script that reproduces one finding against the compiled module and
checks the answer against the pure-Python twin or the driver with plain ``assert``; it prints ``ok``
last. A crash (a segfault, an abort, a sanitizer report) kills only that process, and shows here as
its signal or exit status with what it printed: it cannot hide in, or take down, the test runner.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((Path(__file__).parent / "regressions").glob("*.py"))


def test_there_are_regressions():
    assert len(SCRIPTS) >= 3


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_replayed_in_a_process_of_its_own(script):
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONFAULTHANDLER="1")
    proc = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    said = f"exit status {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    assert proc.returncode == 0, said
    assert proc.stdout.strip().splitlines()[-1:] == ["ok"], said
