"""Shared fixtures: every factory test runs against both implementations (ids ``c`` and ``py``)."""

import importlib

import cassandra
import pytest
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


IMPLEMENTATIONS = {"c": "pyfactories._speedups", "py": "pyfactories._python"}


@pytest.fixture(params=sorted(IMPLEMENTATIONS), ids=sorted(IMPLEMENTATIONS))
def impl(request):
    """The implementation module under test; its caches start empty.

    The compiled module must import: a missing build fails the test, it is not skipped.
    """
    module = importlib.import_module(IMPLEMENTATIONS[request.param])
    module.cache_clear()
    yield module
    module.cache_clear()
