"""The built wheel installs into a fresh virtual environment and loads the compiled module."""

import subprocess
import venv
import pytest

from .installed import ROOT, TAG, build_wheels

pytestmark = pytest.mark.slow


def run(*cmd, cwd=None):
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def fresh_env(path):
    venv.EnvBuilder(with_pip=True).create(path)
    return path / "bin" / "python"


IMPORT_CHECK = (
    "import pyfactories, pyfactories.rows._rows as s; from pyfactories import fastpath; "
    "print(pyfactories.__impl__, pyfactories.__file__, fastpath.AVAILABLE); "
    "print(pyfactories.cached_named_tuple_factory(['a'], [(1,)]))"
)


def test_sdist_builds_with_a_c_compiler_and_no_cython(tmp_path):
    sdist = build_wheels(TAG)["sdist"]  # as `make wheels` built it, once for the run
    python = fresh_env(tmp_path / "env")
    run(str(python), "-m", "pip", "install", "-q", "--upgrade", "setuptools>=77", "wheel", "cassandra-driver==3.30.1")
    assert "Cython" not in run(str(python), "-m", "pip", "list")
    run(str(python), "-m", "pip", "install", "-q", "--no-build-isolation", str(sdist))
    first, second = run(str(python), "-c", IMPORT_CHECK, cwd=tmp_path).splitlines()
    impl, location, fastpath_on = first.split()
    assert (impl, fastpath_on) == ("cython", "True")
    assert location.startswith(str(tmp_path / "env"))
    assert second == "[Row(a=1)]"


def test_wheel_installs_and_imports_compiled(tmp_path):
    wheel = build_wheels(TAG)[TAG]  # as `make wheels` built it, once for the run
    assert "-cp3" in wheel.name and "linux" in wheel.name, "expected a binary wheel"

    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    # The driver comes from the package index (the extra names it); pyfactories only from the wheel.
    run(str(python), "-m", "pip", "install", "-q", f"{wheel}[cassandra]")
    out = run(
        str(python),
        "-c",
        "import pyfactories, pyfactories.rows._rows as s; "
        "print(pyfactories.__impl__, pyfactories.__file__); "
        "print(pyfactories.cached_named_tuple_factory(['a'], [(1,)]))",
        cwd=tmp_path,
    )
    impl, location = out.splitlines()[0].split()
    assert impl == "cython"
    assert location.startswith(str(env_dir))
    assert "Row(a=1)" in out
    installed = run(str(python), "-m", "pip", "show", "-f", "pyfactories")
    assert "py.typed" in installed
    # every module of the source tree's package is in the wheel: its Python files and stubs, and one
    # compiled module per Cython source (the matrix runs the unit suite from the other Pythons' wheels)
    files = {line.strip() for line in installed.split("Files:", 1)[1].splitlines() if line.strip()}
    sources = {str(p.relative_to(ROOT)) for p in (ROOT / "pyfactories").rglob("*") if p.suffix in (".py", ".pyi")}
    assert sources <= files, sorted(sources - files)
    compiled = {f"pyfactories/{pyx.parent.name}/{pyx.stem}" for pyx in (ROOT / "ext").glob("*/*.pyx")}
    assert compiled == {f.split(".cpython-")[0] for f in files if f.endswith(".so")}, sorted(files)
