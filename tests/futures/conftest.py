import importlib

import pytest

from pyfactories.futures._scylla_py import SCYLLA

MODULES = {"c": "pyfactories.futures._futures", "py": "pyfactories.futures._futures_py"}

#: scylla-driver's query plans and per-shard pools are followed on scylla-driver only (its policy knows tablets)
collect_ignore = [] if SCYLLA else ["test_scylla_plans.py", "test_scylla_borrow.py"]


@pytest.fixture(scope="module", params=sorted(MODULES), ids=sorted(MODULES))
def spec(request):
    """The module under test: the compiled one (``c``) or its pure-Python twin (``py``)."""
    return importlib.import_module(MODULES[request.param])
