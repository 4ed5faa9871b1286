"""Every driver release pyfactories is tested on, proven against the real node: the wheel and that
release installed into a fresh virtual environment, the README's quick start (``pyfactories.enable``)
there, with the status it reports, then the fast path's differential tests and the connection's tests
(timers, framing, writes) run against the installed wheel (not the source tree). The package's unit
suite runs from the wheel of every other CPython found, and every other Python x driver pair gets a
smoke test with rows from the node. A release outside the list, and one without compiled extensions,
get one warning naming what is off and why, and the driver's own path.

What ``make test`` already runs in full (every test on the reference release and this Python, from
the source tree) is not repeated here; the runs here check each property with a tenth of its examples (at least 10).
``make test-matrix`` runs these (marker ``matrix``); ``make test`` leaves them out.
"""

import json
import os
from concurrent.futures import ThreadPoolExecutor

import cassandra
import pytest

from pyfactories import _driver

from .installed import SMOKE, TAG, TEST_TOOLS, build_wheels, copy_suite, env_with, pythons, run

RELEASES = [f"{dist}=={version}" for dist, versions in _driver.TESTED_RELEASES.items() for version in versions]
REFERENCE_RELEASE = "cassandra-driver==3.30.1"  # the one the unit suite runs with on every Python
#: The runs here repeat properties ``make test`` checks in full (on the reference release and this
#: Python, from the source tree): each with a tenth of its examples (tests/conftest.py).
EXAMPLES_SCALE = {"PYFACTORIES_EXAMPLES_SCALE": "0.1"}
#: The fast path's differential tests: decoding (fuzzed), routing, every CQL type, statements, paging.
SUBSET = ["tests/decoding/test_fastpath.py", "tests/decoding/test_fastpath_routes.py", "tests/integration/test_fastpath.py",
          "tests/integration/test_fastpath_routes.py", "tests/integration/test_types.py"]
#: The connection classes' unit tests (decision, timers, framing and writes next to the driver's own
#: loop and classes) and their tests against the node (timeouts, rows, v4 and v5, both reactors, TLS,
#: the driver's other behaviours next to its own class).
CONNECTION = ["tests/connection/test_connection.py", "tests/connection/test_dispatch.py", "tests/connection/test_encoding.py",
              "tests/connection/test_framing.py", "tests/connection/test_writes.py",
              "tests/connection/test_reads.py", "tests/integration/test_connection.py", "tests/integration/test_framing.py",
              "tests/integration/test_writes.py", "tests/integration/test_connection_behaviours.py"]
#: The leaner futures, against the driver's own futures, messages, pools and ``execute_concurrent`` on each
#: line (scylla-driver's steps where they differ), and against the node; the query plans and replicas they
#: compute against each line's own policy (and, on cassandra-driver, the stream borrowed from its pool).
FUTURES = ["tests/futures/test_futures.py", "tests/futures/test_concurrent.py", "tests/futures/test_execute.py",
           "tests/integration/test_futures.py"]
PLANS = ["tests/futures/test_plans.py", "tests/futures/test_borrow.py"]
SCYLLA_PLANS = ["tests/futures/test_scylla_plans.py", "tests/futures/test_scylla_borrow.py"]
#: Awaiting requests on both loops, against the driver's results through the usual bridge: with the leaner
#: futures and with the driver's own.
AIO = ["tests/aio/test_aio.py", "tests/integration/test_aio.py"]
#: The package's unit suite (the tools' own tests, under tests/benchmarks and tests/profiling, stay out).
#: The checks of the source tree (its layout, structure and imports) read the sources, which the copy has not.
UNIT = ["tests", "--ignore=tests/benchmarks", "--ignore=tests/profiling", "--ignore=tests/examples", "--ignore=tests/integration",
        "--ignore=tests/package/test_structure.py", "--ignore=tests/package/test_layout.py",
        "--ignore=tests/package/test_import_cycles.py", "-m", "not integration and not slow and not matrix"]

pytestmark = [pytest.mark.matrix, pytest.mark.integration]
#: Runs at once: they wait on the node and on their processes more than they compute.
PARALLEL_RUNS = 4


@pytest.fixture(scope="module")
def wheels():
    return build_wheels(TAG)


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    return copy_suite(tmp_path_factory.mktemp("suite"))


def against(contact):
    """The environment of a run that talks to the session's node (and starts none)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYFACTORIES_")}
    env.update(PYFACTORIES_HOSTS=",".join(contact.hosts), PYFACTORIES_PORT=str(contact.port), **EXAMPLES_SCALE)
    return env


def pytest_passed(done):
    """A run that passed every test it collected; on failure, the end of its output and of its errors
    (where pytest's faulthandler writes the threads' stacks of a run that crashed)."""
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    assert done.returncode == 0 and " passed" in last and "skipped" not in last, (
        f"exit {done.returncode}\n{done.stdout[-6000:]}\n--- stderr ---\n{done.stderr[-12000:]}")


# The README's quick start, against the node: one call, then the status of the session it connects.
QUICK_START = """
import json, os, warnings
import cassandra, pyfactories
from cassandra.cluster import Cluster
from pyfactories import _driver
contact = os.environ["PYFACTORIES_HOSTS"].split(","), int(os.environ["PYFACTORIES_PORT"])
cluster = Cluster(contact[0], port=contact[1])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    pyfactories.enable(cluster)
    session = cluster.connect()
row = session.execute("SELECT key, cluster_name FROM system.local").one()
status = pyfactories.status(session)
cluster.shutdown()
print(json.dumps({"driver": [_driver.distribution(), cassandra.__version__], "file": pyfactories.__file__,
                  "status": status.as_dict(), "row": type(row).__name__, "fields": list(row._fields),
                  "class": cluster.connection_class.__name__,
                  "warnings": [str(w.message) for w in caught if w.category is RuntimeWarning]}))
"""


#: A release's subset in two halves, each run in an environment of its own beside the other (together
#: they are the longest run of the matrix): what waits on the node's writes, shutdowns and failures, with
#: the futures and awaiting, in the second.
SECOND_HALF = ["tests/integration/test_writes.py", "tests/integration/test_connection_behaviours.py"]


def _release_run(driver, wheels, suite, contact, where):
    """The quick start's output on ``driver``, then the first half of its subset of the suite run
    against the wheel (not on the reference release: ``make test`` runs the subset there, on this Python)."""
    python = env_with(where / "env", [driver, wheels[TAG], *TEST_TOOLS])
    found = json.loads(run(python, "-c", QUICK_START, env=against(contact), cwd=suite).stdout.splitlines()[-1])
    if driver == REFERENCE_RELEASE:
        return where, found, None
    first = [test for test in [*SUBSET, *CONNECTION] if test not in SECOND_HALF]
    return where, found, run(python, "-m", "pytest", *first, "-q", "-p", "no:cacheprovider",
                             env=against(contact), cwd=suite, ok=False)


def _second_half(driver, wheels, suite, contact, where):
    """The second half of ``driver``'s subset (:data:`SECOND_HALF`, the futures, awaiting)."""
    python = env_with(where / "env-second", [driver, wheels[TAG], *TEST_TOOLS])
    futures = [*FUTURES, *(PLANS if driver.startswith("cassandra-driver==") else SCYLLA_PLANS)]
    return run(python, "-m", "pytest", *SECOND_HALF, *futures, *AIO, "-q", "-p", "no:cacheprovider",
               env=against(contact), cwd=suite, ok=False)


def _unit_run(tag, python, suite, where):
    env = env_with(where / tag, [REFERENCE_RELEASE, build_wheels(tag)[tag], *TEST_TOOLS], python=python)
    return run(env, "-m", "pytest", *UNIT, "-q", "-p", "no:cacheprovider", cwd=suite, ok=False,
               env={**os.environ, **EXAMPLES_SCALE})


def other_pythons() -> dict[str, str]:
    """Every CPython found but the one running the tests (``make test`` runs the unit suite on it)."""
    return {tag: python for tag, python in pythons().items() if tag != TAG}


@pytest.fixture(scope="module")
def runs(wheels, suite, contact, tmp_path_factory):
    """Every release's run and every Python's unit suite, started together on a few threads (each
    waits mostly on the node or on its own process): a test then takes its own run's result."""
    where = tmp_path_factory.mktemp("runs")
    with ThreadPoolExecutor(max_workers=PARALLEL_RUNS) as pool:
        # the unit runs first: each builds its Python's wheel, which computes while the release runs wait
        units = {tag: pool.submit(_unit_run, tag, python, suite, where) for tag, python in other_pythons().items()}
        releases = {}
        for i, driver in enumerate(RELEASES):  # a release's two halves one after the other: they start together
            releases[driver] = pool.submit(_release_run, driver, wheels, suite, contact, where / f"r{i}")
            if driver != REFERENCE_RELEASE:
                releases[f"{driver} second half"] = pool.submit(_second_half, driver, wheels, suite, contact,
                                                                where / f"r{i}")
        yield {**units, **releases}


@pytest.mark.parametrize("driver", RELEASES)
def test_the_fast_path_and_connection_tests_pass_on(driver, runs):
    where, found, done = runs[driver].result()
    assert found["driver"] == driver.split("==") and found["file"].startswith(str(where))
    assert (found["row"], found["fields"]) == ("Row", ["key", "cluster_name"])
    status = found["status"]
    assert status["connection"]["why"].startswith("TimerQueueLibevConnection")
    assert all(part["on"] for part in status.values()) and found["warnings"] == [], found
    if driver == REFERENCE_RELEASE:
        assert done is None and cassandra.__version__ == driver.split("==")[1]  # make test ran the subset on it
    else:
        pytest_passed(done)
        pytest_passed(runs[f"{driver} second half"].result())


def test_the_unit_suite_passes_from_each_wheel_on_its_python(runs):
    assert other_pythons() or list(pythons()) == [TAG]
    for tag in other_pythons():
        pytest_passed(runs[tag].result())


# On every other Python: the factories against the specification, and rows through the fast path
# from the real node equal to the driver's own.
ROWS = SMOKE + """
import os
from cassandra.query import named_tuple_factory
from profiling.cluster import Contact, connect
contact = Contact(os.environ["PYFACTORIES_HOSTS"].split(","), int(os.environ["PYFACTORIES_PORT"]))
query = "SELECT keyspace_name, table_name, column_name, kind, position, type FROM system_schema.columns"
rows = {}
for fast in (False, True):
    cluster, session = connect(contact, row_factory=named_tuple_factory)
    if fast:
        assert decoding.enable(session)
    rows[fast] = list(session.execute(query))
    cluster.shutdown()
print(json.dumps({"rows": len(rows[True]), "equal": rows[True] == rows[False],
                  "fields": type(rows[True][0])._fields == type(rows[False][0])._fields}))
"""


def test_every_other_python_and_driver_pair(suite, contact, tmp_path):
    wheels = build_wheels()
    pairs = [(tag, python, driver) for tag, python in other_pythons().items() for driver in RELEASES]
    assert pairs or list(pythons()) == [TAG]

    def pair_run(tag, python, driver):
        env = env_with(tmp_path / f"{tag}-{driver}", [driver, wheels[tag]], python=python)
        return run(env, "-c", ROWS, env=against(contact), cwd=suite).stdout.strip().splitlines()

    with ThreadPoolExecutor(max_workers=PARALLEL_RUNS) as pool:  # each waits on uv and on the node
        outputs = list(pool.map(lambda pair: pair_run(*pair), pairs))
    for (tag, _python, driver), lines in zip(pairs, outputs):
        smoke, rows = json.loads(lines[-2]), json.loads(lines[-1])
        assert smoke["impl"] == "cython" and smoke["fastpath"] is True, (tag, driver, smoke)
        assert all(smoke["same"].values()), (tag, driver, smoke)
        assert rows["rows"] > 100 and rows["equal"] and rows["fields"], (tag, driver, rows)


# The quick start on a driver it is not tested on: it must stay on the driver's own path, saying why once.
@pytest.mark.parametrize("driver, why", [
    ("scylla-driver==3.29.10", "scylla-driver 3.29.10 is not a driver release it is tested on"),
    ("cassandra-driver==3.29.3", "is not a driver release it is tested on"),
])
def test_other_drivers_keep_their_own_path_with_one_warning(driver, why, wheels, suite, contact, tmp_path):
    python = env_with(tmp_path / "env", [driver, wheels[TAG]])
    found = json.loads(run(python, "-c", QUICK_START, env=against(contact), cwd=suite).stdout.splitlines()[-1])
    assert (found["row"], found["fields"]) == ("Row", ["key", "cluster_name"]) and "TimerQueue" not in found["class"]
    # every part off, each naming why, in one warning
    assert not any(part["on"] for part in found["status"].values()), found
    assert all(why in part["why"] for part in found["status"].values()), found
    assert len(found["warnings"]) == 1 and found["warnings"][0].count(why) == 4, found["warnings"]
