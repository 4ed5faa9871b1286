"""The ``ConnectionFields`` of an implementation under test (shared by the connection and futures tests)."""

from __future__ import annotations

import importlib
from types import ModuleType


def fields_of(module: ModuleType) -> type:
    """The ``ConnectionFields`` of the implementation of ``module``: the twin's for a pure-Python module (its
    name ends in ``_py``), the compiled one's otherwise."""
    name = "_fields_py" if module.__name__.endswith("_py") else "_fields"
    return importlib.import_module(f"pyfactories.connection.{name}").ConnectionFields
