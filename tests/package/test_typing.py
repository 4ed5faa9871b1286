"""The package ships type information that mypy accepts in a user's code."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.slow

#: mypy with no cache read or written: these tests run at once in parallel workers, and mypy writes its
#: cache even with --no-incremental; processes sharing one race on it (a known mypy crash, "INTERNAL ERROR")
MYPY = [sys.executable, "-m", "mypy", "--no-incremental", f"--cache-dir={os.devnull}", "--ignore-missing-imports",
        "--show-traceback"]  # (an internal error of mypy says where)


def test_mypy_accepts_user_code():
    done = subprocess.run(
        [*MYPY, str(HERE / "typing_user.py")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_rejects_wrong_use(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from pyfactories import cached_named_tuple_factory\ncached_named_tuple_factory(1, 2, 3)\n")
    done = subprocess.run([*MYPY, str(bad)], capture_output=True, text=True)
    assert done.returncode == 1 and "Too many arguments" in done.stdout


def test_mypy_knows_the_type_of_typed_rows(tmp_path):
    bad = tmp_path / "bad_rows.py"
    bad.write_text(
        "from dataclasses import dataclass\n"
        "from pyfactories import class_row\n"
        "@dataclass\n"
        "class User:\n"
        "    id: int\n"
        "rows: list[int] = class_row(User)(['id'], [(1,)])\n"
        "class_row(User, extra='allow')\n"
    )
    done = subprocess.run([*MYPY, str(bad)],
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert 'Incompatible types in assignment (expression has type "list[User]", variable has type "list[int]")' in done.stdout
    assert 'Argument "extra" to "class_row" has incompatible type' in done.stdout
