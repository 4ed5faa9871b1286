"""Pick the implementation: compiled unless told otherwise, never silently.

``PYFACTORIES_NO_EXTENSIONS=1`` (any value but empty or ``0``) forces pure
Python, as does PyPy. Otherwise the compiled modules must import; if one cannot,
the error says so instead of quietly running the slow path.
"""

import importlib
import os
import platform
from types import ModuleType

NO_EXTENSIONS = os.environ.get("PYFACTORIES_NO_EXTENSIONS", "") not in ("", "0")
#: whether the compiled modules are in use (each concept's ``_x``, not its specification ``_x_py``)
COMPILED = not NO_EXTENSIONS and platform.python_implementation() == "CPython"
name = "cython" if COMPILED else "python"


def choose(compiled: str, specification: str) -> ModuleType:
    """The compiled module ``compiled`` (dotted) or, in pure Python, its specification: a compiled
    module that cannot be imported is an error that says what to do, never a silent fallback."""
    if not COMPILED:
        return importlib.import_module(specification)
    try:
        return importlib.import_module(compiled)
    except ImportError as exc:  # pragma: no cover - exercised by a subprocess test
        raise ImportError(
            f"pyfactories: the compiled module {compiled} could not be imported "
            f"({exc}). Reinstall pyfactories for this Python, or set "
            "PYFACTORIES_NO_EXTENSIONS=1 to use the pure-Python implementation."
        ) from exc
