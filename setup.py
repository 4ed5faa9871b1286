"""Build the compiled modules of pyfactories.

Every ``ext/<name>.pyx`` becomes ``pyfactories.<name>``. With Cython present
the ``.pyx`` is compiled; without it (installing from an sdist) the generated
``ext/<name>.c`` that the sdist carries is used, so only a C compiler is needed.

``PYFACTORIES_DEBUG=1`` builds with line tracing (coverage/profilers can see
inside the extension) and without optimisation.
"""
import os
from pathlib import Path

from setuptools import Extension, setup

HERE = Path(__file__).parent
DEBUG = os.environ.get("PYFACTORIES_DEBUG", "") not in ("", "0")


def _extensions():
    try:
        from Cython.Build import cythonize
    except ImportError:
        cythonize = None
    sources = sorted((HERE / "ext").glob("*.pyx" if cythonize else "*.c"))
    if not sources:
        raise SystemExit("no sources in ext/: install Cython to build from a git checkout")
    macros = [("CYTHON_TRACE", "1"), ("CYTHON_TRACE_NOGIL", "1")] if DEBUG else []
    flags = ["-O0", "-g"] if DEBUG else ["-O2"]
    modules = [
        Extension(
            f"pyfactories.{src.stem}",
            [str(src.relative_to(HERE))],
            define_macros=macros,
            extra_compile_args=flags,
        )
        for src in sources
    ]
    if cythonize is None:
        return modules
    directives = {
        "language_level": 3,
        "embedsignature": True,
        "boundscheck": True,
        "wraparound": False,
        "linetrace": DEBUG,
    }
    return cythonize(modules, compiler_directives=directives, include_path=[_driver_dir()])


def _driver_dir():
    """Where the installed driver's ``.pxd`` files live (for ``cimport cassandra.*``)."""
    try:
        import cassandra
    except ImportError:
        return str(HERE)
    return str(Path(cassandra.__file__).parent.parent)


setup(ext_modules=_extensions())
