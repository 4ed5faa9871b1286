"""The package ships type information that mypy accepts in a user's code."""

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.slow


def test_mypy_accepts_user_code():
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--ignore-missing-imports", str(HERE / "typing_user.py")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_rejects_wrong_use(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from pyfactories import cached_named_tuple_factory\ncached_named_tuple_factory(1, 2, 3)\n")
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--ignore-missing-imports", str(bad)], capture_output=True, text=True)
    assert done.returncode == 1 and "Too many arguments" in done.stdout
