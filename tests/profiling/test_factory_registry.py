"""The factory registry: every name a user types, one answer; every list derived from it."""

import re
from pathlib import Path

import pytest
from cassandra import query

import pyfactories
from profiling import factories as registry
from profiling import typed
from profiling.__main__ import build_parser, main, options
from pyfactories.rows import _rows_py

ROOT = Path(__file__).resolve().parents[2]


def test_names_and_aliases_resolve_to_their_factory():
    seen = {}
    for f in registry.FACTORIES:
        for name in (f.name, *f.aliases):
            assert registry.resolve(name) is f, name
            assert seen.setdefault(name, f) is f, f"{name} claimed twice"


@pytest.mark.parametrize("typed, name", [
    ("cached_named_tuple_factory", "cached_named_tuple"),
    ("pyfactories.cached_named_tuple_factory", "cached_named_tuple"),
    ("pyfactories:cached_named_tuple_factory", "cached_named_tuple"),  # module:function of a known one
    ("pyfactories.dict_factory", "pf_dict"),
    ("pyfactories.ordered_dict_factory", "pf_ordered_dict"),
    ("cassandra.query.dict_factory", "dict"),
    ("dict_factory", "dict"),  # a bare name both packages define: the driver's, as "dict" is
    ("ordered_dict_factory", "ordered_dict"),
    ("named_tuple_factory", "named_tuple"),
    ("tuple_factory", "tuple"),
    ("pyfactories.tuple_factory", "tuple"),  # the driver's own object, re-exported
    ("pyfactories.rows._rows_py.dict_factory", "py_dict"),
])
def test_names_users_know(typed, name):
    assert registry.resolve(typed).name == name


def test_the_callables_are_the_ones_named():
    assert registry.resolve("dict").row_factory is query.dict_factory
    assert registry.resolve("pf_dict").row_factory is pyfactories.dict_factory
    assert registry.resolve("fastpath_named").row_factory is query.tuple_factory
    for f in registry.of_family("pyfactories"):
        twin = registry.BY_NAME[f.twin]
        assert twin.family == "python" and twin.counterpart == f.counterpart
        assert registry.BY_NAME[f.counterpart].family == "driver"
        if f.module == "pyfactories":
            assert twin.row_factory is getattr(_rows_py, f.attr)
    assert registry.resolve("class_row").row_factory is typed.dataclass_rows
    assert registry.resolve("fastpath_class").row_factory is typed.dataclass_rows
    assert registry.resolve("py_class_row").row_factory is typed.py_dataclass_rows
    assert [f.fastpath for f in registry.of_family("fastpath")] == ["named", "dict", "tuple"]


def test_custom_factories_and_errors():
    custom = registry.resolve("tests.profiling.slow_factory:slow_tuple_factory")
    assert custom.family == "custom" and custom.name == "tests.profiling.slow_factory:slow_tuple_factory"
    with pytest.raises(ValueError, match="unknown factory 'nope'.*cached_named_tuple_factory"):
        registry.resolve("nope")
    with pytest.raises(ValueError, match="cannot import row factory"):
        registry.resolve("json:no_such_function")


def test_orders_derive_from_the_registry():
    assert registry.names(registry.FACTORIES)[0] == registry.REFERENCE
    assert registry.grouped(["pf_dict", "py_dict", "dict", "tuple", "fastpath_dict", "mine"]) == [
        "tuple", "dict", "pf_dict", "fastpath_dict", "py_dict", "mine"]
    assert set(registry.offline()) == set(registry.names(registry.of_family("driver", "pyfactories", "python")))
    assert all(registry.BY_NAME[n].family != "python" for n in registry.for_sessions())
    assert registry.for_sessions()[0] == registry.REFERENCE


def test_the_makefiles_example_works():
    """`make profile PATTERN=... FACTORY=...` as the Makefile's own comment spells it."""
    example = re.search(r"make profile PATTERN=(\S+) FACTORY=(\S+)", (ROOT / "Makefile").read_text())
    assert example, "the Makefile shows how to profile one combination"
    pattern, factory = example.groups()
    argv = ["run", "--default", "--pattern", pattern, "--factory", factory]
    opts = options(build_parser().parse_args(argv), argv)
    assert opts.patterns == [pattern] and opts.factories == [registry.resolve(factory).name]


def test_help_and_list_say_which_dict_factory(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert "bare dict_factory and ordered_dict_factory mean the driver's" in " ".join(out.split())
    assert "pyfactories.dict_factory" in out
    assert main(["list"]) == 0
    assert "pyfactories.ordered_dict_factory" in capsys.readouterr().out
