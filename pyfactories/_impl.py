"""Pick the implementation: compiled unless told otherwise, never silently.

``PYFACTORIES_NO_EXTENSIONS=1`` (any value but empty or ``0``) forces pure
Python, as does PyPy. Otherwise the compiled module must import; if it cannot,
the error says so instead of quietly running the slow path.
"""

import os
import platform
from types import ModuleType

impl: ModuleType

NO_EXTENSIONS = os.environ.get("PYFACTORIES_NO_EXTENSIONS", "") not in ("", "0")

if NO_EXTENSIONS or platform.python_implementation() != "CPython":
    from . import _python

    impl = _python
    name = "python"
else:
    try:
        from . import _speedups
    except ImportError as exc:  # pragma: no cover - exercised by a subprocess test
        raise ImportError(
            "pyfactories: the compiled module pyfactories._speedups could not be imported "
            f"({exc}). Reinstall pyfactories for this Python, or set "
            "PYFACTORIES_NO_EXTENSIONS=1 to use the pure-Python implementation."
        ) from exc
    impl = _speedups
    name = "cython"
