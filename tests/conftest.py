"""Shared fixtures: every factory test runs against both implementations (ids ``c`` and ``py``)."""

import importlib
from contextlib import ExitStack

import cassandra
import pytest

from profiling.cluster import reach
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
            found = stack.enter_context(reach(say=lambda _msg: None))
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


def pytest_collection_modifyitems(config, items):
    """``make test`` runs on several pytest-xdist workers (``--dist loadgroup``): every test that
    talks to a node goes to one of them, in the order written, so the session's node is started and
    stopped by one process and the keyspaces are never made or dropped by two at once; the others
    share the tests that need no node. (Without pytest-xdist, as in the matrix's environments, there
    is nothing to mark.)"""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if "own_node" in item.fixturenames:  # a node of the test's own, on another address
            item.add_marker(pytest.mark.xdist_group("own_node"))
        elif "contact" in item.fixturenames or item.get_closest_marker("integration"):
            item.add_marker(pytest.mark.xdist_group("node"))


def pytest_terminal_summary(terminalreporter):
    if why := _node_exited():
        terminalreporter.write_sep("=", "the local Cassandra node exited during the run", red=True)
        terminalreporter.write_line(why)
