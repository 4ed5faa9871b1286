"""The loops the asyncio tests run on (the standard loop and uvloop), each counting its
``call_soon_threadsafe`` calls, and both implementations of ``pyfactories.aio`` (ids ``c`` and ``py``)."""

from __future__ import annotations

import importlib

import pytest

from .loops import LOOPS

MODULES = {"c": "pyfactories.aio._aio", "py": "pyfactories.aio._aio_py"}


@pytest.fixture(params=sorted(LOOPS), ids=sorted(LOOPS))
def loop(request):
    """A new loop of each kind (closed at the end)."""
    made = LOOPS[request.param]()
    yield made
    made.run_until_complete(made.shutdown_default_executor())
    made.close()


@pytest.fixture(params=sorted(MODULES), ids=sorted(MODULES))
def spec(request):
    return importlib.import_module(MODULES[request.param])
