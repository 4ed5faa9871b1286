"""The fuzz suite: hypothesis properties over every compiled entry point, differential against the
pure-Python twin and the driver.

``make test`` runs it briefly (``PYFACTORIES_FUZZ_EXAMPLES``, 100 examples a property by default);
``make asan`` runs it against extensions built with AddressSanitizer and UBSan, with more examples;
``make fuzz-long`` runs it there for as many examples as you ask. Every test here is marked ``fuzz``.
"""

import gc
import os

import pytest
from hypothesis import HealthCheck, settings

#: Examples each property runs (``make asan`` and ``make fuzz-long`` raise it).
EXAMPLES = int(os.environ.get("PYFACTORIES_FUZZ_EXAMPLES", "100"))

#: The settings of every fuzz property: many examples, no deadline (a sanitizer build is slow),
#: no health check about slow data or large inputs (frames are large on purpose).
fuzz = settings(
    max_examples=EXAMPLES,
    # CI runs the same examples every time (a run found once is found again); elsewhere they vary
    derandomize=os.environ.get("CI", "") == "true",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                           HealthCheck.function_scoped_fixture],
)


def pytest_collection_modifyitems(config, items):
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.fuzz)


@pytest.fixture
def frozen_heap():
    """The objects alive before the test are left out of its garbage collections (``gc.freeze``): a
    property that collects after every example then scans what its examples made, not the whole
    interpreter, which under the sanitizers takes a tenth of a second a collection."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()
