"""The public API, the implementation selector, cross-process pickling."""

import concurrent.futures
import multiprocessing
import os
import re
import subprocess
import sys
from pathlib import Path

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
    """The Compatibility table says "yes" under `enable()` for exactly the releases the package runs on."""
    from pathlib import Path

    from pyfactories import _driver

    readme = (Path(__file__).resolve().parent.parent.parent / "README.md").read_text()
    table = readme.split("### Compatibility", 1)[1].split("\n\n", 2)[1]
    assert table.splitlines()[0].split("|")[4].strip() == "`enable()`"
    enabled = {}
    for line in table.splitlines()[2:]:
        dist, releases, _factories, enable, _drivers_own = [c.strip() for c in line.strip("|").split("|")]
        if enable == "yes":
            enabled[dist] = tuple(r.strip() for r in releases.split(","))
    assert enabled == (getattr(_driver, "TESTED_RELEASES", None) or _driver.FASTPATH_RELEASES)


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
    """An edit of one section must not take the ones after it along."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent.parent / "README.md").read_text()
    parts = [line[3:] for line in readme.splitlines() if line.startswith("## ")]
    assert parts == ["Quick start", "Install", "Usage", "Performance", "Profiling", "Development"]
    assert len(readme.splitlines()) <= 400, "the README is for users: move the rest into docs/"


ROOT = Path(__file__).resolve().parent.parent.parent
# A markdown link or image: [text](target) or ![alt](target), the target up to a space or ")".
MARKDOWN_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def relative_links(text):
    """The targets of the relative links in a markdown text, without their #fragment (none for
    URLs, mail addresses and links within the page)."""
    targets = []
    for target in MARKDOWN_LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("#"):
            continue
        targets.append(target.split("#", 1)[0])
    return targets


def broken_links(path):
    """The relative links of one markdown file whose target does not exist."""
    return [target for target in relative_links(path.read_text(encoding="utf-8"))
            if not (path.parent / target).exists()]


def test_the_link_extractor_finds_relative_links_and_their_broken_targets(tmp_path):
    text = ("See [the docs](docs/rows.md#typed-rows), ![chart](benchmarks/results/chart.png),\n"
            "[a site](https://example.org/x.md), [mail](mailto:a@b.c), [here](#usage) and\n"
            "[gone](docs/no-such-file.md \"title\").")
    assert relative_links(text) == ["docs/rows.md", "benchmarks/results/chart.png", "docs/no-such-file.md"]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "rows.md").write_text("[back](../README.md) [up](../missing.md)")
    (tmp_path / "README.md").write_text(text)
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    (tmp_path / "benchmarks" / "results" / "chart.png").write_bytes(b"")
    assert broken_links(tmp_path / "README.md") == ["docs/no-such-file.md"]
    assert broken_links(tmp_path / "docs" / "rows.md") == ["../missing.md"]


def _documents():
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
            *sorted((ROOT / "benchmarks" / "results").glob("*.md"))]


def test_every_relative_link_of_the_documentation_resolves():
    """README.md, docs/ and benchmarks/results/ link only to files that exist (the driver matrix runs
    this suite from a copy of tests/, profiling/, benchmarks/, docs/, examples/ and README.md: all they link to)."""
    assert _documents()[1:], "no docs/ beside README.md"
    broken = {str(path.relative_to(ROOT)): broken_links(path) for path in _documents()}
    assert {name: targets for name, targets in broken.items() if targets} == {}


def test_the_documentation_names_things_not_issues_or_seeds():
    """As the sources do (tests/package/test_structure.py): no issue or seed numbers in README.md and docs/."""
    from .test_structure import HISTORY

    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for path in _documents()
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if HISTORY.search(line)]
    assert not found, "\n".join(found)
