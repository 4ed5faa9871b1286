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
    driver = _driver()
    if driver is None:
        # The fast path cimports the driver's .pxd files: without them it cannot be built.
        sources = [src for src in sources if src.stem != "_fastpath"]
    macros = [("PYFACTORIES_DRIVER_VERSION", f'"{driver[0] if driver else "none"}"')]
    if DEBUG:
        macros += [("CYTHON_TRACE", "1"), ("CYTHON_TRACE_NOGIL", "1")]
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
    include = [driver[1]] if driver else []
    return cythonize(modules, compiler_directives=directives, include_path=include)


def _driver():
    """``(version, folder for cimport)`` of the installed compiled driver, or None.

    The fast path is compiled against the ``.pxd`` files the driver's wheel
    ships; the version is compiled in, and checked at import time.
    """
    try:
        import cassandra
    except ImportError:
        return None
    package = Path(cassandra.__file__).parent
    if not (package / "deserializers.pxd").exists():
        return None
    return cassandra.__version__, str(package.parent)


setup(ext_modules=_extensions())
