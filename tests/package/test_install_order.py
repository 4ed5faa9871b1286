"""Installing pyfactories never replaces the service's driver: every install order, in fresh
virtual environments, checked by which distribution owns the ``cassandra`` package afterwards.

cassandra-driver and scylla-driver install the same ``cassandra`` package; whichever pip
installs last wins. pyfactories depends on neither; ``[cassandra]`` and ``[scylla]`` pick one.
"""

import json

import pytest

from .installed import TAG, build_wheels, env_with, run
SCYLLA = "scylla-driver==3.29.12"
CASSANDRA_OLDER = "cassandra-driver==3.29.3"  # not the release the wheel's fast path is built against

pytestmark = pytest.mark.slow

OWNERS = (
    "import json, importlib.metadata as md\n"
    "found = {}\n"
    "for d in ('cassandra-driver', 'scylla-driver'):\n"
    "    try: found[d] = md.version(d)\n"
    "    except md.PackageNotFoundError: pass\n"
    "print(json.dumps(found))\n"
)
IMPORT = ("import json, warnings, cassandra\n"
          "with warnings.catch_warnings(record=True) as caught:\n"
          "    warnings.simplefilter('always')\n"
          "    import pyfactories\n"
          "print(pyfactories.__impl__, cassandra.__version__, pyfactories.cached_named_tuple_factory(['a'], [(1,)]))\n"
          "print(json.dumps([str(w.message) for w in caught]))\n")


@pytest.fixture(scope="module")
def wheel():
    """The wheel of this Python, as ``make wheels`` built it (once for the run)."""
    return build_wheels(TAG)[TAG]


def owners(python):
    return json.loads(run(python, "-c", OWNERS).stdout)


@pytest.mark.parametrize("driver, extra", [(SCYLLA, ""), (SCYLLA, "[scylla]"), (CASSANDRA_OLDER, ""),
                                           (CASSANDRA_OLDER, "[cassandra]")])
def test_the_driver_installed_first_is_left_untouched(tmp_path, wheel, driver, extra):
    python = env_with(tmp_path / "env", driver, f"{wheel}{extra}", installer="pip")
    dist, version = driver.split("==")
    assert owners(python) == {dist: version}
    impl, cassandra_version, rows = run(python, "-c", IMPORT).stdout.splitlines()[0].split(" ", 2)
    assert (impl, cassandra_version, rows) == ("cython", version, "[Row(a=1)]")


@pytest.mark.parametrize("extra, dist", [("[cassandra]", "cassandra-driver"), ("[scylla]", "scylla-driver")])
def test_an_extra_installs_its_driver(tmp_path, wheel, extra, dist):
    python = env_with(tmp_path / "env", f"{wheel}{extra}", installer="pip")
    assert list(owners(python)) == [dist]
    assert json.loads(run(python, "-c", IMPORT).stdout.splitlines()[1]) == []  # no warning


def test_without_a_driver_the_import_says_what_to_install(tmp_path, wheel):
    python = env_with(tmp_path / "env", wheel, installer="pip")
    assert owners(python) == {}
    done = run(python, "-c", "import pyfactories", ok=False)
    assert done.returncode != 0
    assert "no `cassandra` package is installed: pip install 'pyfactories[cassandra]'" in done.stderr


def test_two_drivers_claiming_the_package_are_named_once(tmp_path, wheel):
    python = env_with(tmp_path / "env", CASSANDRA_OLDER, SCYLLA, wheel, installer="pip")
    assert set(owners(python)) == {"cassandra-driver", "scylla-driver"}
    (warning,) = json.loads(run(python, "-c", IMPORT).stdout.splitlines()[1])
    assert "cassandra-driver 3.29.3 and scylla-driver 3.29.12 are both installed" in warning
    assert "(cassandra 3.29.12)" in warning  # the last one installed wrote the files in use
