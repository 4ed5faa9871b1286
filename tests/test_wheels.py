"""``make wheels``: a manylinux wheel for every CPython 3.11+ on this machine, each installed into a
fresh environment of its own Python and checked there, away from the source tree."""

import json
import subprocess
from pathlib import Path

import pytest

from pyfactories import _driver

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow

# Run by each installed wheel: which implementation loads, and its rows against the pure-Python
# specification (the same rows, field names and types) on awkward column names.
SMOKE = """
import json, warnings, cassandra, pyfactories
from pyfactories import _python, _speedups
with warnings.catch_warnings():
    warnings.simplefilter("ignore", RuntimeWarning)  # said below: whether the fast path is on
    from pyfactories import fastpath
names = ["id", "[applied]", "system.count(*)", "1st", "select", "id"]
rows = [(1, True, 10, "a", None, 2), (3, False, 30, "b", b"x", 4)]
same = {}
for attr in ("cached_named_tuple_factory", "dict_factory", "ordered_dict_factory"):
    ours, spec = getattr(_speedups, attr)(names, rows), getattr(_python, attr)(names, rows)
    same[attr] = ours == spec and [type(r).__name__ for r in ours] == [type(r).__name__ for r in spec] and (
        getattr(type(ours[0]), "_fields", None) == getattr(type(spec[0]), "_fields", None))
print(json.dumps({"impl": pyfactories.__impl__, "file": pyfactories.__file__, "fastpath": fastpath.AVAILABLE,
                  "driver": cassandra.__version__, "same": same}))
"""


def run(*cmd, cwd=None):
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    dist = tmp_path_factory.mktemp("dist")
    run("make", "-s", "-C", ROOT, "wheels", f"DIST={dist}")
    pythons = run("make", "-s", "-C", ROOT, "pythons").split()
    return dist, pythons


def test_one_wheel_per_python_and_the_sdist(built):
    dist, pythons = built
    tags = {p.name.split("-")[2] for p in dist.glob("pyfactories-*.whl")}
    versions = [run(py, "-c", "import sys; print('cp%d%d' % sys.version_info[:2])").strip() for py in pythons]
    assert "cp311" in versions and tags == set(versions)
    assert all("manylinux" in p.name for p in dist.glob("*.whl"))
    assert len(list(dist.glob("pyfactories-*.tar.gz"))) == 1


def test_every_wheel_installs_and_runs_compiled_on_its_python(built, tmp_path):
    dist, pythons = built
    for py in pythons:
        tag = run(py, "-c", "import sys; print('cp%d%d' % sys.version_info[:2])").strip()
        (wheel,) = dist.glob(f"pyfactories-*-{tag}-*.whl")
        env = tmp_path / tag
        run(py, "-m", "venv", env)
        python = env / "bin" / "python"
        run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", f"{wheel}[cassandra]")
        found = json.loads(run(python, "-c", SMOKE, cwd=tmp_path).strip().splitlines()[-1])
        assert found["impl"] == "cython" and found["file"].startswith(str(env)), (tag, found)
        # on exactly when the extra installed a release the fast path is tested on
        assert found["fastpath"] is (found["driver"] in _driver.FASTPATH_RELEASES["cassandra-driver"]), (tag, found)
        assert found["same"] == dict.fromkeys(found["same"], True) and len(found["same"]) == 3, (tag, found)
