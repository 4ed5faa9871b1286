"""The layout rule (``docs/architecture.md``): every compiled module sits in the folder of the part it
serves, ``ext/<part>/_<name>.pyx`` -> ``pyfactories.<part>._<name>``, next to its pure-Python
specification ``pyfactories/<part>/_<name>_py.py`` where it has one; what it includes sits beside it."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
EXT, PACKAGE = ROOT / "ext", ROOT / "pyfactories"
PARTS = ("rows", "decoding", "binding", "futures", "connection", "aio")
#: compiled modules whose specification is the driver's own code (the tests compare with the driver)
DRIVER_IS_THE_SPECIFICATION = {"decoding._fastpath", "decoding._routes"}
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def compiled_modules(ext: Path = EXT) -> list[str]:
    return sorted(".".join(p.relative_to(ext).with_suffix("").parts) for p in ext.rglob("*.pyx"))


def layout_errors(ext: Path, package: Path, parts=PARTS, driver_specified=DRIVER_IS_THE_SPECIFICATION) -> list[str]:
    """What breaks the rule in a tree (``ext``, ``package``): empty when it holds."""
    errors = []
    for path in sorted(ext.iterdir()):
        if path.is_file() and path.suffix in {".pyx", ".pxi", ".pxd", ".h"} and path.name != "_driver_version.pxi":
            errors.append(f"ext/{path.name} is in no part's folder")
        if path.is_dir() and path.name not in parts and path.name != "__pycache__":
            errors.append(f"ext/{path.name}/ is not a part of the package ({', '.join(parts)})")
    for name in compiled_modules(ext):
        part, _, module = name.rpartition(".")
        if part not in parts or "." in part:
            errors.append(f"ext/{name.replace('.', '/')}.pyx is not in a part's folder")
            continue
        if not (package / part / "__init__.py").is_file():
            errors.append(f"pyfactories/{part}/ is not a package")
        if not module.startswith("_"):
            errors.append(f"{name}: a compiled module's name starts with an underscore")
        twin = package / part / f"{module}_py.py"
        if not twin.is_file() and name not in driver_specified:
            errors.append(f"{name}: no specification pyfactories/{part}/{module}_py.py (and the driver's is not it)")
        if twin.is_file() and name in driver_specified:
            errors.append(f"{name}: has a specification, yet is listed as specified by the driver")
    for pxi in ext.rglob("*.pxi"):
        if pxi.name == "_driver_version.pxi":
            continue
        includers = [p for p in pxi.parent.glob("*.pyx") if f'include "{pxi.name}"' in p.read_text(encoding="utf-8")]
        if not includers:
            errors.append(f"ext/{pxi.relative_to(ext)} is included by no module of its folder")
    for spec in package.rglob("_*_py.py"):  # a whole module, or the part of one a .pxi holds
        beside = ext / spec.parent.relative_to(package) / spec.name[:-6]
        if not beside.with_suffix(".pyx").is_file() and not beside.with_suffix(".pxi").is_file():
            errors.append(f"pyfactories/{spec.relative_to(package)} specifies no compiled code beside it")
    for stray in package.glob("*.so"):
        errors.append(f"pyfactories/{stray.name}: a compiled module outside the part it serves")
    return errors


def test_the_tree_follows_the_rule():
    assert compiled_modules(), "no .pyx found under ext/<part>/"
    assert layout_errors(EXT, PACKAGE) == []


def test_the_rule_catches_what_it_should(tmp_path):
    ext, package = tmp_path / "ext", tmp_path / "pyfactories"
    for folder in (ext / "rows", ext / "misc", package / "rows"):
        folder.mkdir(parents=True)
    (package / "rows" / "__init__.py").write_text("")
    (ext / "rows" / "_rows.pyx").write_text('include "_used.pxi"\n')
    (ext / "rows" / "_used.pxi").write_text("")
    (ext / "rows" / "_orphan.pxi").write_text("")
    (ext / "_flat.pyx").write_text("")
    (package / "rows" / "_gone_py.py").write_text("")
    errors = layout_errors(ext, package, parts=("rows",), driver_specified=set())
    assert errors == [
        "ext/_flat.pyx is in no part's folder",
        "ext/misc/ is not a part of the package (rows)",
        "ext/_flat.pyx is not in a part's folder",
        "rows._rows: no specification pyfactories/rows/_rows_py.py (and the driver's is not it)",
        "ext/rows/_orphan.pxi is included by no module of its folder",
        "pyfactories/rows/_gone_py.py specifies no compiled code beside it",
    ]
    (package / "rows" / "_rows_py.py").write_text("")
    (ext / "_flat.pyx").unlink()
    (ext / "rows" / "_orphan.pxi").unlink()
    (package / "rows" / "_gone_py.py").unlink()
    (ext / "misc").rmdir()
    assert layout_errors(ext, package, parts=("rows",), driver_specified=set()) == []


@pytest.mark.parametrize("name", compiled_modules())
def test_each_compiled_module_is_built_where_its_part_is(name):
    spec = importlib.util.find_spec(f"pyfactories.{name}")
    assert spec is not None and spec.origin is not None, f"pyfactories.{name} is not built"
    assert Path(spec.origin).parent == PACKAGE / name.rpartition(".")[0]


@pytest.mark.parametrize("name", compiled_modules())
def test_the_architecture_names_each_compiled_module_and_its_specification(name):
    part, _, module = name.rpartition(".")
    row = next((line for line in ARCHITECTURE.splitlines() if line.startswith(f"| `{part}` |")), "")
    assert re.search(rf"`{module}`", row), f"docs/architecture.md: the {part} row does not name {module}"
    if name not in DRIVER_IS_THE_SPECIFICATION:
        assert f"`{module}_py`" in row, f"docs/architecture.md: the {part} row does not name {module}_py"
