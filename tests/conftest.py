"""Shared fixtures: every factory test runs against both implementations (ids ``c`` and ``py``)."""

import fcntl
import importlib
import os
import shutil
import tempfile
from contextlib import ExitStack, contextmanager
from pathlib import Path

import cassandra
import pytest

from profiling.cluster import Contact, reach
from profiling import node
from profiling.node import NodeError
from hypothesis import settings

# Examples are checked for what they do, not timed: this machine is shared and noisy.
settings.register_profile("pyfactories", deadline=None)
settings.load_profile("pyfactories")

import pyfactories


def pytest_report_header(config):
    return [
        f"pyfactories: __impl__={pyfactories.__impl__} (default implementation of this process)",
        f"cassandra-driver: {cassandra.__version__}",
    ]


IMPLEMENTATIONS = {"c": "pyfactories.rows._rows", "py": "pyfactories.rows._rows_py"}


@pytest.fixture(params=sorted(IMPLEMENTATIONS), ids=sorted(IMPLEMENTATIONS))
def impl(request):
    """The implementation module under test; its caches start empty.

    The compiled module must import: a missing build fails the test, it is not skipped.
    """
    module = importlib.import_module(IMPLEMENTATIONS[request.param])
    module.cache_clear()
    yield module
    module.cache_clear()


@pytest.fixture(scope="session")
def contact():
    """A real Cassandra for the whole session (``profiling.cluster.Contact``: hosts and port).

    ``profiling.cluster.reach`` starts one local node (or reuses one that is
    already up, or the user's own cluster named by ``PYFACTORIES_HOSTS``) and
    stops it at the end only if this session started it. Without Java or
    Maven no node can start: the tests that need one then fail with the tool's
    message saying what to install; they are never skipped.
    """
    with ExitStack() as stack:
        try:
            found = stack.enter_context(_shared_node() if RUN_DIR in os.environ else reach(say=lambda _msg: None))
        except NodeError as exc:
            pytest.fail(f"these tests need a Cassandra node and none could be started:\n{exc}", pytrace=False)
        check = node.exit_watch()
        _NODE_WATCHES.append(check)
        try:
            yield found
        finally:  # asked before the node is stopped at the end, which is no exit to report
            _NODE_WATCHES.remove(check)
            _NODE_EXITS.extend(filter(None, [check()]))


#: Checks on the session's local node: when it exits mid-run (out of memory, killed), every later
#: test fails with "connection refused"; the failed tests and the summary then say why.
_NODE_WATCHES: list = []
_NODE_EXITS: list[str] = []


def _node_exited() -> str | None:
    return "\n".join([*_NODE_EXITS, *filter(None, (check() for check in _NODE_WATCHES))]) or None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed and (why := _node_exited()):
        report.sections.append(("the local Cassandra node", why))
    return report


#: Under pytest-xdist (``make test``): a folder the workers of the run share, named to them by the
#: controlling process in this variable (set before they start).
RUN_DIR = "PYFACTORIES_TEST_RUN_DIR"


@contextmanager
def _shared_node():
    """The run's node under pytest-xdist: the first worker that needs it starts it (or finds it
    running, or the cluster of ``PYFACTORIES_HOSTS``) while the others wait on a lock, then all use
    it; the controlling process stops it at the end if a worker started it (``pytest_unconfigure``)."""
    shared = Path(os.environ[RUN_DIR])
    with open(shared / "node.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        started, hosts = node.ensure_up(quiet=True)
        if started:
            (shared / "node.started").touch()
    yield Contact(hosts, node.port(), local=not node.external_hosts())


def _controller(config) -> bool:
    """The process that runs the xdist workers (``-n N``), not one of them."""
    return not hasattr(config, "workerinput") and bool(getattr(config.option, "numprocesses", None))


def pytest_configure(config):
    if _controller(config):
        os.environ[RUN_DIR] = tempfile.mkdtemp(prefix="pyfactories-tests-")


def pytest_unconfigure(config):
    if _controller(config) and (shared := os.environ.pop(RUN_DIR, None)):
        if (Path(shared) / "node.started").exists():
            node.stop(quiet=True)
        shutil.rmtree(shared, ignore_errors=True)


#: The lanes of ``make test``'s pytest-xdist workers, by test file: each lane runs whole on one worker,
#: in the order written; every other test goes to whichever worker is free. The tests on the node are
#: in three lanes, the profiler's, the benchmarks' and the rest (each lane's keyspaces its own), so no
#: two tests make or drop the same keyspace at once; the tests of the built wheel in one, those of pip's install orders
#: (which wait for the same wheel, then for pip) in another.
LANES = {"tests/integration/": "node", "tests/benchmarks/": "bench", "tests/profiling/": "profiler",
         "tests/package/test_wheel.py": "wheel", "tests/package/test_install_order.py": "pip"}


def lane(nodeid: str) -> str | None:
    return next((name for prefix, name in LANES.items() if nodeid.startswith(prefix)), None)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scheduling by scope, with :data:`LANES` as the scopes and each other test a
    scope of its own."""
    from xdist.scheduler import LoadScopeScheduling

    class Lanes(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return lane(nodeid) or nodeid

    return Lanes(config, log)


#: A run that repeats properties the main run checks in full (the same suite on another Python or
#: driver release, from the wheel) checks each with this fraction of its examples: every assertion
#: still runs, on fewer generated inputs.
EXAMPLES_SCALE = "PYFACTORIES_EXAMPLES_SCALE"


def pytest_collection_modifyitems(config, items):
    scale = float(os.environ.get(EXAMPLES_SCALE, "1"))
    if scale == 1:
        return
    assert 0 < scale < 1, f"{EXAMPLES_SCALE} is a fraction of the examples, got {scale}"
    scaled = set()
    for item in items:
        test = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        if getattr(test, "is_hypothesis_test", False) and test not in scaled:
            scaled.add(test)  # once per function, however many parameters it runs with
            # the settings hypothesis reads when the test runs (its own @settings, or the profile's)
            own = test._hypothesis_internal_use_settings
            test._hypothesis_internal_use_settings = settings(own, max_examples=max(10, int(own.max_examples * scale)))


def pytest_terminal_summary(terminalreporter):
    if why := _node_exited():
        terminalreporter.write_sep("=", "the local Cassandra node exited during the run", red=True)
        terminalreporter.write_line(why)
