"""Fixtures of the benchmark tests: a Cassandra node only for the ``integration`` ones."""

import pytest


@pytest.fixture(scope="session")
def bench_cluster():
    """``(hosts, port)`` of the project's local node (started if needed, stopped only if started here)."""
    from profiling.node import ensure_up, port, stop

    started, hosts = ensure_up(nodes=1, quiet=True)
    yield hosts, port()
    if started:
        stop(quiet=True)
