"""The sdist, and this Python's wheel installed into a fresh virtual environment, loading every
compiled module."""

import subprocess
import tarfile
import pytest

from pyfactories import _driver

from .installed import ROOT, TAG, UV, build_wheels, env_with

pytestmark = pytest.mark.slow


def run(*cmd, cwd=None):
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


IMPORT_CHECK = (
    "import pyfactories, pyfactories.rows._rows as s; from pyfactories import fastpath; "
    "import cassandra; print(pyfactories.__impl__, pyfactories.__file__, fastpath.AVAILABLE, cassandra.__version__); "
    "print(pyfactories.cached_named_tuple_factory(['a'], [(1,)]))"
)


def test_the_sdist_carries_every_modules_generated_c_and_nothing_compiled():
    # what lets the other Pythons' wheels be built from it without Cython (tests/package/test_wheels.py)
    with tarfile.open(build_wheels(TAG)["sdist"]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    sources = {str(pyx.relative_to(ROOT)) for pyx in (ROOT / "ext").glob("*/*.pyx")}
    assert sources and {name[:-4] + ".c" for name in sources} <= names and sources <= names
    assert not [name for name in names if name.endswith(".so")]


def test_wheel_installs_and_imports_compiled(tmp_path):
    wheel = build_wheels(TAG)[TAG]  # as `make wheels` built it, once for the run
    assert "-cp3" in wheel.name and "linux" in wheel.name, "expected a binary wheel"

    env_dir = tmp_path / "env"
    # The driver comes from the package index (the extra names it); pyfactories only from the wheel.
    python = env_with(env_dir, f"{wheel}[cassandra]")
    first, second = run(str(python), "-c", IMPORT_CHECK, cwd=tmp_path).splitlines()
    impl, location, fastpath_on, driver = first.split()
    assert impl == "cython" and location.startswith(str(env_dir))
    # on exactly when the extra installed a release the fast path is tested on
    assert fastpath_on == str(driver in _driver.TESTED_RELEASES["cassandra-driver"]), first
    assert second == "[Row(a=1)]"
    installed = run(str(UV), "pip", "show", "--files", "--python", str(python), "pyfactories")
    assert "py.typed" in installed
    # every module of the source tree's package is in the wheel: its Python files and stubs, and one
    # compiled module per Cython source (the matrix runs the unit suite from the other Pythons' wheels)
    files = {line.strip() for line in installed.split("Files:", 1)[1].splitlines() if line.strip()}
    sources = {str(p.relative_to(ROOT)) for p in (ROOT / "pyfactories").rglob("*") if p.suffix in (".py", ".pyi")}
    assert sources <= files, sorted(sources - files)
    compiled = {f"pyfactories/{pyx.parent.name}/{pyx.stem}" for pyx in (ROOT / "ext").glob("*/*.pyx")}
    assert compiled == {f.split(".cpython-")[0] for f in files if f.endswith(".so")}, sorted(files)
