"""The shape of the tree: short modules, and a product that names things rather than our history."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
PRODUCT = ("pyfactories", "profiling", "benchmarks", "ext", "examples")
SOURCE_SUFFIXES = {".py", ".pyx", ".pxd", ".pxi", ".h"}
MAX_LINES = 450
# Issue and seed numbers mean nothing to users: name the thing itself.
HISTORY = re.compile(r"issue[ _#-]?\d|seed[ _-]?0\d\d", re.IGNORECASE)


def _sources():
    for top in PRODUCT:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in SOURCE_SUFFIXES and path.is_file() and "fixtures" not in path.parts:
                yield path


SOURCES = list(_sources())


def test_the_product_has_sources():
    assert {p.relative_to(ROOT).parts[0] for p in SOURCES} == set(PRODUCT)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_longer_than_it_can_be_read(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines; split it by concern"


@pytest.mark.parametrize("path", [*SOURCES, ROOT / "README.md", ROOT / "Makefile"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_the_product_names_things_not_issues_or_seeds(path):
    found = [f"{n}: {line.strip()}" for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if HISTORY.search(line)]
    assert not found, "\n".join(found)


def test_the_history_pattern_catches_what_it_should():
    assert HISTORY.search("ISSUE2_COLS") and HISTORY.search("issue 5 targets") and HISTORY.search("seed 004's")
    assert not HISTORY.search("seeds: 127.0.0.1") and not HISTORY.search("random.Random(seed)")
