"""The command line every ``python -m benchmarks.bench_x`` shares."""

from __future__ import annotations

import argparse
from typing import Any, Callable, Iterable

from .environment import environment
from ..reporting.results_json import SCHEMA_VERSION, write_json


def bench_parser(module: str, doc: str | None, sizes: Iterable[str], offline: bool = False
                 ) -> argparse.ArgumentParser:
    """The options every ``python -m benchmarks.bench_x`` shares: ``--size`` and ``--json``; with
    ``offline`` also those of the depths run in worker processes (no server)."""
    ap = argparse.ArgumentParser(prog=f"python -m {module}", description=(doc or "").split("\n\n")[0])
    ap.add_argument("--size", choices=sorted(sizes), default="quick")
    ap.add_argument("--json", metavar="PATH", help="write the results (with the environment) here")
    if offline:
        ap.add_argument("--processes", type=int, help="worker processes (default: by size)")
        ap.add_argument("--rounds", type=int, help="rounds per process (default: by size)")
        ap.add_argument("--no-python", action="store_true", help="leave out the pure-Python twins")
    return ap


def apply_overrides(spec: dict, processes: int | None, rounds: int | None) -> dict:
    """``--processes``/``--rounds`` from the command line, over the size's defaults."""
    if processes:
        spec["processes"] = processes
    if rounds:
        spec["rounds"] = rounds
    return spec


def print_and_save(section: dict[str, Any], render: Callable[[dict[str, Any]], str], json_path: str | None) -> None:
    """Print a bench's table, and write its section (under its depth's key) with the environment
    to ``json_path`` if given."""
    print()
    print(render(section))
    if json_path:
        path = write_json(json_path, {"schema": SCHEMA_VERSION, "env": environment(), section["depth"]: section})
        print(f"\nJSON: {path}")
