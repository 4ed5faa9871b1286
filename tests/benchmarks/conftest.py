"""Fixtures of the benchmark tests: a Cassandra node only for the ``integration`` ones."""

import pytest


@pytest.fixture(scope="session")
def bench_cluster(cassandra_hosts):
    """``(hosts, port)`` of the session's Cassandra (see ``tests/conftest.py``)."""
    from profiling.node import port

    return cassandra_hosts, port()
