"""Build the compiled modules of pyfactories.

Every ``ext/<concept>/<name>.pyx`` becomes ``pyfactories.<concept>.<name>``: ``ext/`` has the
folders of the package, and a compiled module sits beside its pure-Python specification. With Cython present
the ``.pyx`` is compiled; without it (installing from an sdist) the generated
``ext/<name>.c`` that the sdist carries is used, so only a C compiler is needed.

``PYFACTORIES_DEBUG=1`` builds with line tracing (coverage/profilers can see
inside the extension) and without optimisation. ``PYFACTORIES_SANITIZE=1`` builds with
AddressSanitizer and UndefinedBehaviorSanitizer (``make asan``: the fuzz suite runs against it).
``PYFACTORIES_WERROR=1`` makes every compiler warning an error (CI builds so).
"""
import filecmp
import os
import shutil
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = Path(__file__).parent
DEBUG = os.environ.get("PYFACTORIES_DEBUG", "") not in ("", "0")
SANITIZE = os.environ.get("PYFACTORIES_SANITIZE", "") not in ("", "0")
WERROR = os.environ.get("PYFACTORIES_WERROR", "") not in ("", "0")
# Every error found is fatal (no recovery): a finding fails the run where it happens.
SANITIZERS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]


def _extensions():
    try:
        from Cython.Build import cythonize
    except ImportError:
        cythonize = None
    sources = sorted((HERE / "ext").glob("*/*.pyx" if cythonize else "*/*.c"))
    if not sources:
        raise SystemExit("no sources in ext/: install Cython to build from a git checkout")
    driver = _driver()
    if cythonize is not None and driver is None:
        # The fast path cimports the driver's .pxd files: without them it cannot be generated.
        sources = [src for src in sources if src.stem != "_fastpath"]
    macros = [("CYTHON_TRACE", "1"), ("CYTHON_TRACE_NOGIL", "1")] if DEBUG else []
    flags = ["-O0", "-g"] if DEBUG else ["-O2"]
    link = []
    if SANITIZE:
        flags, link = ["-O1", "-g", *SANITIZERS], list(SANITIZERS)
    if WERROR:
        flags.append("-Werror")
    # The C helpers (declared for Cython in the .pxd of the same name): a changed header recompiles
    # the modules, from an sdist too (cythonize alone only adds the headers a module cimports).
    headers = sorted(str(h.relative_to(HERE)) for h in (HERE / "ext").glob("*/*.h"))
    # ext/ for the generated _driver_version.pxi, and every concept's folder for its headers and .pxd
    # (the decoding cimports the rows' row builders).
    folders = [str(HERE / "ext"), *sorted(str(d) for d in (HERE / "ext").iterdir() if d.is_dir())]
    modules = [
        Extension(
            "pyfactories." + ".".join(src.relative_to(HERE / "ext").with_suffix("").parts),
            [str(src.relative_to(HERE))],
            include_dirs=folders,
            depends=headers,
            define_macros=macros,
            extra_compile_args=flags,
            extra_link_args=link,
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
    _record_driver_version(driver[0] if driver else "none",
                           _pxd_digest(Path(driver[1]) / "cassandra") if driver else None)
    include = [*folders, *([driver[1]] if driver else [])]
    if WERROR:
        from Cython.Compiler import Options

        Options.warning_errors = True
    return cythonize(modules, compiler_directives=directives, include_path=include, nthreads=os.cpu_count() or 1)


class BuildExtOnEveryCpu(build_ext):
    """Compiles the modules side by side, one per CPU, unless ``-j`` says otherwise: every build (in
    place, each wheel, the sanitizer build, an sdist's install) takes the time of its longest modules."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

    def run(self):
        _prune(Path(self.build_lib), {self.get_ext_filename(ext.name) for ext in self.extensions}, "*.so")
        super().run()

    def copy_file(self, infile, outfile, *args, **kwargs):
        """The in-place copy of a module (``--inplace``) leaves an identical file alone, and replaces
        a changed one by renaming a new file over it: a process that has the old one loaded keeps
        it intact (copying over it in place would change the code under that process)."""
        if self.inplace and os.path.exists(outfile) and filecmp.cmp(infile, outfile, shallow=False):
            return outfile, False
        if not self.inplace:
            return super().copy_file(infile, outfile, *args, **kwargs)
        partial = f"{outfile}.{os.getpid()}.partial"
        shutil.copy2(infile, partial)
        os.replace(partial, outfile)
        return outfile, True


class BuildPyOfTheSources(build_py):
    """Copies the package's Python files, after removing from the build folder those the sources no longer have."""

    def run(self):
        _prune(Path(self.build_lib), {str(p.relative_to(HERE)) for p in (HERE / "pyfactories").rglob("*.py*")}, "*.py*")
        super().run()


def _prune(build_lib, wanted, pattern):
    """A build folder kept from an earlier layout of the package holds modules the sources no longer
    have: a wheel would carry them. Removes the files matching ``pattern`` that ``wanted`` does not name."""
    for found in (build_lib / "pyfactories").rglob(pattern) if (build_lib / "pyfactories").is_dir() else ():
        if str(found.relative_to(build_lib)) not in wanted:
            found.unlink()


def _record_driver_version(version, pxd_digest):
    """Write ``ext/_driver_version.pxi`` (included by the modules) when the version changed.

    Cython regenerates a module's C when an included file changes, so the
    version and the digest of the ``.pxd`` declarations compiled into the C (and
    shipped in the sdist) are always those the C was generated from.
    """
    pxi = HERE / "ext" / "_driver_version.pxi"
    text = ("# Generated by setup.py: the cassandra-driver the C code was generated against.\n"
            f'DRIVER_VERSION = "{version}"\nDRIVER_PXD_DIGEST = "{pxd_digest or "none"}"\n')
    if not pxi.exists() or pxi.read_text() != text:
        pxi.write_text(text)


def _pxd_digest(package):
    """``pyfactories._driver.pxd_digest`` (loaded alone: the package cannot be imported before it is built)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_pyfactories_driver", HERE / "pyfactories" / "_driver.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.pxd_digest(package)


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


setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildExtOnEveryCpu, "build_py": BuildPyOfTheSources})
