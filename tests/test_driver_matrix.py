"""Every driver release the fast path supports, proven against the real node: the wheel and that
release installed into a fresh virtual environment, then the fast path's differential tests run
there against the installed wheel (not the source tree). A release outside the list, and one
without compiled extensions, get one warning and the driver's own path.

``make test-matrix`` runs these (marker ``matrix``); ``make test`` leaves them out.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pyfactories import _driver

ROOT = Path(__file__).resolve().parent.parent
RELEASES = [f"{dist}=={version}" for dist, versions in _driver.FASTPATH_RELEASES.items() for version in versions]
#: The fast path's differential tests: decoding (fuzzed), every CQL type, statements, paging.
SUBSET = ["tests/test_fastpath.py", "tests/integration/test_fastpath.py", "tests/integration/test_types.py"]
TEST_TOOLS = ["pytest>=8", "hypothesis>=6.100"]

pytestmark = [pytest.mark.matrix, pytest.mark.integration]


def run(*cmd, env=None, cwd=None, ok=True):
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, cwd=cwd)
    if ok:
        assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", out, ROOT)
    (built,) = out.glob("pyfactories-*.whl")
    return built


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """The tests and what they import, away from the source tree's ``pyfactories``."""
    where = tmp_path_factory.mktemp("suite")
    for part in ("tests", "profiling", "benchmarks"):
        shutil.copytree(ROOT / part, where / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", where)
    return where


def env_with(tmp_path, wheel, driver):
    path = tmp_path / "env"
    run(sys.executable, "-m", "venv", path)
    python = path / "bin" / "python"
    run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", driver, wheel, *TEST_TOOLS)
    return python


def against(contact):
    """The environment of a run that talks to the session's node (and starts none)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYFACTORIES_")}
    env.update(PYFACTORIES_HOSTS=",".join(contact.hosts), PYFACTORIES_PORT=str(contact.port))
    return env


@pytest.mark.parametrize("driver", RELEASES)
def test_the_fast_paths_differential_tests_pass_on(driver, wheel, suite, contact, tmp_path):
    python = env_with(tmp_path, wheel, driver)
    installed = run(python, "-c", "import pyfactories, cassandra; from pyfactories import _driver; "
                    "print(_driver.distribution(), cassandra.__version__, pyfactories.__file__)", cwd=suite).stdout.split()
    assert installed[:2] == driver.split("==") and installed[2].startswith(str(tmp_path))
    done = run(python, "-m", "pytest", *SUBSET, "-q", "-p", "no:cacheprovider", env=against(contact), cwd=suite,
               ok=False)
    assert done.returncode == 0, done.stdout[-6000:]
    assert " passed" in done.stdout.splitlines()[-1] and "skipped" not in done.stdout.splitlines()[-1]


# Rows through a session that asked for the fast path: it must stay on the driver's own path.
REFUSED = """
import json, os, warnings
from cassandra.query import named_tuple_factory
from profiling.cluster import Contact, connect
contact = Contact(os.environ["PYFACTORIES_HOSTS"].split(","), int(os.environ["PYFACTORIES_PORT"]))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from pyfactories import fastpath
    cluster, session = connect(contact, row_factory=named_tuple_factory)
    enabled = fastpath.enable(session)
row = session.execute("SELECT key, cluster_name FROM system.local").one()
cluster.shutdown()
print(json.dumps({"enabled": enabled, "row": type(row).__name__, "fields": list(row._fields),
                  "warnings": sorted({str(w.message) for w in caught if w.category is RuntimeWarning})}))
"""


@pytest.mark.parametrize("driver, why", [
    ("scylla-driver==3.29.10", "scylla-driver 3.29.10 is not a driver release it is tested on"),
    ("cassandra-driver==3.29.3", "the installed Cassandra driver has no compiled extensions"),  # its wheel's
])
def test_other_drivers_keep_their_own_path_with_one_warning(driver, why, wheel, suite, contact, tmp_path):
    python = env_with(tmp_path, wheel, driver)
    found = json.loads(run(python, "-c", REFUSED, env=against(contact), cwd=suite).stdout.splitlines()[-1])
    assert found["enabled"] is False and (found["row"], found["fields"]) == ("Row", ["key", "cluster_name"])
    assert len(found["warnings"]) == 1 and why in found["warnings"][0], found["warnings"]
