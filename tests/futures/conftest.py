import importlib

import pytest

MODULES = {"c": "pyfactories.futures._futures", "py": "pyfactories.futures._futures_py"}


@pytest.fixture(scope="module", params=sorted(MODULES), ids=sorted(MODULES))
def spec(request):
    """The module under test: the compiled one (``c``) or its pure-Python twin (``py``)."""
    return importlib.import_module(MODULES[request.param])
