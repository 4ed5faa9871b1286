"""Helpers of the tests that install pyfactories into fresh virtual environments: commands, the
environments, the built wheels, and a copy of the suite that imports the installed package."""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
#: What the package's tests need beside the wheel and the driver (attrs and msgspec: classes typed rows build).
TEST_TOOLS = ("pytest>=8", "hypothesis>=6.100", "attrs>=23.1", "msgspec>=0.18", "uvloop>=0.19")

# Run by an installed wheel: which implementation loads, and its rows against the pure-Python
# specification (the same rows, field names and types) on awkward column names.
SMOKE = """
import json, warnings, cassandra, pyfactories
from pyfactories.rows import _rows_py
from pyfactories.rows import _rows
with warnings.catch_warnings():
    warnings.simplefilter("ignore", RuntimeWarning)  # said below: whether the fast path is on
    from pyfactories import decoding
names = ["id", "[applied]", "system.count(*)", "1st", "select", "id"]
rows = [(1, True, 10, "a", None, 2), (3, False, 30, "b", b"x", 4)]
same = {}
for attr in ("cached_named_tuple_factory", "dict_factory", "ordered_dict_factory"):
    ours, spec = getattr(_rows, attr)(names, rows), getattr(_rows_py, attr)(names, rows)
    same[attr] = ours == spec and [type(r).__name__ for r in ours] == [type(r).__name__ for r in spec] and (
        getattr(type(ours[0]), "_fields", None) == getattr(type(spec[0]), "_fields", None))
print(json.dumps({"impl": pyfactories.__impl__, "file": pyfactories.__file__, "fastpath": decoding.AVAILABLE,
                  "driver": cassandra.__version__, "same": same}))
"""


def run(*cmd: object, cwd: object = None, env: dict[str, str] | None = None, ok: bool = True
        ) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True)
    if ok:
        assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


def python_tag(python: object) -> str:
    return run(python, "-c", "import sys; print('cp%d%d' % sys.version_info[:2])").stdout.strip()


#: uv, a dev dependency installed beside the interpreter running the tests: it makes the environments
#: of tests that do not check installation itself in a second where pip takes ten.
UV = Path(sys.executable).parent / "uv"


def env_with(path: Path, *installs: object, python: object = None, installer: str = "uv") -> Path:
    """A fresh virtual environment of ``python`` (default: the one running the tests), then one
    install per item, in order; returns its interpreter. ``installer="pip"`` for the tests of what
    pip itself does (which driver owns the ``cassandra`` package after each install order)."""
    interpreter = path / "bin" / "python"
    assert UV.exists(), f"{UV} is missing: pip install -e '.[dev]' installs it"
    if installer == "pip":  # the environment made by uv with pip in it (--seed); pip makes every install
        run(UV, "venv", "-q", "--seed", "--python", python or sys.executable, path)
        command: list[object] = [interpreter, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    else:
        run(UV, "venv", "-q", "--python", python or sys.executable, path)
        command = [UV, "pip", "install", "-q", "--python", interpreter]
    for item in installs:
        items = item if isinstance(item, (list, tuple)) else [item]
        run(*command, *items)
    return interpreter


#: What the built wheels and sdist depend on: the files an sdist carries.
SOURCES = ("ext", "pyfactories", "setup.py", "pyproject.toml", "MANIFEST.in", "README.md")


def _sources_key() -> str:
    listed = run("git", "-C", ROOT, "ls-files", "-co", "--exclude-standard", "--", *SOURCES).stdout.split()
    digest = hashlib.sha256()
    for name in sorted(listed):
        if (ROOT / name).is_file():
            digest.update(name.encode() + b"\0" + (ROOT / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


#: The tag of the CPython running the tests (the one ``make build`` builds for).
TAG = "cp%d%d" % sys.version_info[:2]


def build_wheels(*tags: str) -> dict[str, Path]:
    """The sdist (``sdist``) and the wheel of each CPython asked for by tag (``cp311``, ...; every one
    ``make wheels`` builds for when none is named), built once per state of the sources and shared by
    every test (and every pytest run, ``make test`` and ``make test-matrix`` alike) under
    ``.cache/built``; an older state's files are removed. The running Python's wheel is built from the
    source tree (``make wheel``, reusing what ``make build`` compiled), every other one from the sdist by
    an environment without Cython (``make wheel-of``)."""
    built = ROOT / ".cache" / "built"
    built.mkdir(parents=True, exist_ok=True)
    dist = built / _sources_key()
    found = pythons()
    missing = [tag for tag in tags if tag not in found]
    assert not missing, f"no CPython for {missing} here (found {sorted(found)})"
    with open(built / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time: they share the source tree's build/
        if not dist.exists():
            for old in built.iterdir():
                if old.is_dir():
                    shutil.rmtree(old)
            dist.mkdir()
        if not (dist / "sdist.done").exists():
            run("make", "-s", "-C", ROOT, "sdist", f"DIST={dist}")
            (dist / "sdist.done").touch()
        for tag in tags or found:
            if not (dist / f"{tag}.done").exists():
                # this Python's from the source tree (``make build`` compiled it), every other's from the sdist
                how = ["wheel"] if tag == TAG else ["wheel-of", f"PYTHON={found[tag]}"]
                run("make", "-s", "-C", ROOT, *how, f"DIST={dist}")
                (dist / f"{tag}.done").touch()
    wheels = {wheel.name.split("-")[2]: wheel for wheel in dist.glob("pyfactories-*.whl")}
    (sdist,) = dist.glob("pyfactories-*.tar.gz")
    return {tag: wheels[tag] for tag in tags or found} | {"sdist": sdist}


def pythons() -> dict[str, str]:
    """The interpreters ``make wheels`` builds for, by tag."""
    return {python_tag(p): p for p in run("make", "-s", "-C", ROOT, "pythons").stdout.split()}


def copy_suite(where: Path) -> Path:
    """The tests and the tools they import, away from the source tree's ``pyfactories``."""
    for part in ("tests", "profiling", "benchmarks", "docs", "examples"):
        shutil.copytree(ROOT / part, where / part, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "Makefile"):
        shutil.copy(ROOT / name, where)
    return where


if __name__ == "__main__":  # `make test-artifacts`: the wheels of the tags given (else of every CPython), one at a time
    for tag in sys.argv[1:] or [TAG, *sorted(set(pythons()) - {TAG})]:
        build_wheels(tag)  # each call takes the lock for its own build only: a test waits for one at most
