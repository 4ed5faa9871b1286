"""The public API, the implementation selector, cross-process pickling."""

import concurrent.futures
import multiprocessing
import os
import subprocess
import sys

import pytest
from cassandra import query

import pyfactories

PUBLIC = {
    "cached_named_tuple_factory",
    "dict_factory",
    "ordered_dict_factory",
    "tuple_factory",
    "was_applied",
    "cache_info",
    "set_cache_size",
    "cache_clear",
    "CacheInfo",
    "__impl__",
    "class_row",
    "kwargs_row",
    "args_row",
    "ColumnMismatch",
    "RowFactory",
}


def test_public_names():
    assert PUBLIC <= set(pyfactories.__all__)
    assert pyfactories.tuple_factory is query.tuple_factory


def test_no_driver_is_a_clear_import_error(monkeypatch):
    from pyfactories import _driver

    monkeypatch.setattr(_driver.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match=r"no `cassandra` package is installed: pip install 'pyfactories\[cassandra\]'"):
        _driver.check()


def test_two_driver_distributions_are_named(monkeypatch):
    from pyfactories import _driver

    assert [dist for dist, _ in _driver.installed()] == ["cassandra-driver"]  # this environment's
    monkeypatch.setattr(_driver, "installed", lambda: [("cassandra-driver", "3.30.1"), ("scylla-driver", "3.29.12")])
    with pytest.warns(RuntimeWarning, match="cassandra-driver 3.30.1 and scylla-driver 3.29.12 are both installed"):
        _driver.check()


def test_the_distribution_in_use_is_the_one_at_the_packages_version(monkeypatch):
    import cassandra

    from pyfactories import _driver

    assert _driver.distribution() == "cassandra-driver"
    monkeypatch.setattr(_driver, "installed", lambda: [("cassandra-driver", "3.29.3"),
                                                       ("scylla-driver", cassandra.__version__)])
    assert _driver.distribution() == "scylla-driver"
    monkeypatch.setattr(_driver, "installed", lambda: [])
    assert _driver.distribution() == "unknown"


def test_the_readme_lists_the_releases_the_fast_path_runs_on():
    """The Compatibility table says "yes" for exactly the releases the fast path accepts."""
    from pathlib import Path

    from pyfactories import _driver

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    table = readme.split("### Compatibility", 1)[1].split("\n\n", 2)[1]
    fast = {}
    for line in table.splitlines()[2:]:
        dist, releases, _factories, fastpath, _proof = [c.strip() for c in line.strip("|").split("|")]
        if fastpath == "yes":
            fast[dist] = tuple(r.strip() for r in releases.split(","))
    assert fast == _driver.FASTPATH_RELEASES


def test_default_is_compiled_in_this_build():
    assert pyfactories.__impl__ == "cython"
    assert pyfactories.cached_named_tuple_factory.__module__ == "pyfactories.rows._rows"


def _impl_in_subprocess(env_value, extra_code=""):
    env = dict(os.environ)
    env.pop("PYFACTORIES_NO_EXTENSIONS", None)
    if env_value is not None:
        env["PYFACTORIES_NO_EXTENSIONS"] = env_value
    code = "import pyfactories; print(pyfactories.__impl__, pyfactories.dict_factory.__module__)" + extra_code
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)


@pytest.mark.parametrize(
    "value, expected",
    [(None, "cython pyfactories.rows._rows"), ("0", "cython pyfactories.rows._rows"), ("1", "python pyfactories.rows._rows_py")],
)
def test_env_var_selects_implementation(value, expected):
    done = _impl_in_subprocess(value)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected


def test_missing_extension_raises_instead_of_falling_back():
    blocker = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'pyfactories.rows._rows': raise ImportError('blocked for the test')\n"
        "sys.meta_path.insert(0, Block())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYFACTORIES_NO_EXTENSIONS"}
    done = subprocess.run([sys.executable, "-c", blocker + "import pyfactories"], env=env, capture_output=True, text=True)
    assert done.returncode != 0
    assert "pyfactories.rows._rows could not be imported" in done.stderr
    assert "PYFACTORIES_NO_EXTENSIONS=1" in done.stderr


def _named_rows(n):
    from pyfactories import cached_named_tuple_factory

    return cached_named_tuple_factory(["id", "[applied]", "system.count(*)"], [(i, i % 2 == 0, i * 10) for i in range(n)])


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_named_rows_cross_process_boundaries(method):
    ctx = multiprocessing.get_context(method)
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx) as pool:
        results = list(pool.map(_named_rows, [3, 5]))
    assert results == [_named_rows(3), _named_rows(5)]
    row = results[1][4]
    assert (row.id, row.applied, row.system_count) == (4, True, 40)
    assert type(row)._fields == ("id", "applied", "system_count")


def test_the_readme_keeps_every_part_in_order():
    """An edit of one section must not take the ones after it along (the README is long)."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    parts = [line[3:] for line in readme.splitlines() if line.startswith("## ")]
    assert parts == ["Quick start", "Install", "Set-up: two commands", "The row factories", "The fast path",
                     "Request timeouts", "Profiling: where does the client's CPU go?", "The local Cassandra",
                     "Benchmarks", "Safety", "Where things live"]
