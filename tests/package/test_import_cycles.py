"""No import cycles between a package's modules, read from the source (nothing is imported).

Every import counts, at module level or inside a function, except those under
``if TYPE_CHECKING:`` and those of a module's own package ``__init__`` (a module always
imports its parents first: that edge says nothing about the module's design). Relative
imports are resolved, and ``from package import name`` is an edge to ``package.name``
when that is a module of the package, else to ``package`` itself. Importing a module
also runs the ``__init__`` of each package above it, so those count as well (all but the
importing module's own).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
#: The packages checked; add a package by its name.
PACKAGES = ["pyfactories", "profiling", "benchmarks"]


def modules(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` (a folder under ``root``) by its dotted name."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(node: ast.AST):
    """The import statements under ``node``, leaving out ``if TYPE_CHECKING:`` bodies."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield from _imports(ast.Module(body=[other], type_ignores=[]))
        else:
            yield from _imports(child)


def _targets(statement: ast.Import | ast.ImportFrom, name: str, is_package: bool, known: set[str]):
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            yield alias.name
        return
    if statement.level:
        here = name.split(".") if is_package else name.split(".")[:-1]
        base = here[:len(here) - (statement.level - 1)]
        stem = ".".join(base + ([statement.module] if statement.module else []))
    else:
        stem = statement.module or ""
    for alias in statement.names:
        sub = f"{stem}.{alias.name}"
        yield sub if sub in known else stem


def graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (the nearest enclosing module of each target)."""
    found = modules(root, package)
    known = set(found)
    edges: dict[str, set[str]] = {}
    for name, path in found.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        parents = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        edges[name] = set()
        for statement in _imports(tree):
            for target in _targets(statement, name, is_package, known):
                while target and target not in known:
                    target = target.rpartition(".")[0]
                while target and target != name and target not in parents:
                    edges[name].add(target)
                    target = target.rpartition(".")[0]
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected group of modules, as a chain that ends where it starts."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return [_chain(edges, group) for group in groups]


def _chain(edges: dict[str, set[str]], group: list[str]) -> list[str]:
    """A shortest cycle through the group's first module, found breadth first."""
    members = set(group)
    start = group[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(edges[node] & members):
            if nxt == start:
                return paths[node] + [start]
            if nxt not in paths:
                paths[nxt] = paths[node] + [nxt]
                queue.append(nxt)
    raise AssertionError(f"no cycle through {start}")


def describe(found: list[list[str]]) -> str:
    return "\n".join(" -> ".join(chain) for chain in found)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycles(package):
    assert (ROOT / package / "__init__.py").is_file(), f"{package} is not a package under {ROOT}"
    found = cycles(graph(ROOT, package))
    assert not found, f"import cycles in {package}:\n{describe(found)}"


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_checker_finds_a_cycle(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "from . import a\n",
        "pkg/a.py": "from .sub import b\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/b.py": "def f():\n    from ..c import g\n",
        "pkg/c.py": "import pkg.a\n",
        "pkg/d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import e\n",
        "pkg/e.py": "from pkg import d\n",
    })
    found = cycles(graph(tmp_path, "pkg"))
    assert describe(found) == "pkg.a -> pkg.sub.b -> pkg.c -> pkg.a"


def test_the_checker_resolves_names_and_leaves_out_parents(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "from .sub import b\n",
        "pkg/sub/__init__.py": "from .b import VALUE\n",
        "pkg/sub/b.py": "from .. import c\nfrom ..c import THING\nVALUE = 1\n",
        "pkg/c.py": "from pkg.sub.b import VALUE as V\nimport os\n",
    })
    edges = graph(tmp_path, "pkg")
    assert edges == {"pkg": {"pkg.sub", "pkg.sub.b"}, "pkg.sub": {"pkg.sub.b"}, "pkg.sub.b": {"pkg.c"},
                     "pkg.c": {"pkg.sub", "pkg.sub.b"}}
    assert describe(cycles(edges)) == "pkg.c -> pkg.sub.b -> pkg.c"
