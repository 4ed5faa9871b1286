"""Worker processes of the offline depths: each a fresh interpreter, run one after another."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .. import REPO_ROOT


def run_workers(module: str, spec: dict[str, Any], processes: int, say: Callable[[str], None] = print,
                timeout: float = 1800.0) -> list[dict[str, Any]]:
    """Run ``python -m <module> --worker SPEC OUT`` ``processes`` times, one after another.

    Each worker is a fresh interpreter (fresh caches, fresh hash seed, fresh heap
    layout): the spread between processes is part of the measurement, as in pyperf.
    Workers run one at a time: on a 2-core machine they would otherwise compete.
    """
    results = []
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")]))
    with tempfile.TemporaryDirectory(prefix="pyfactories-bench-") as tmp:
        spec_path = Path(tmp) / "spec.json"
        spec_path.write_text(json.dumps(spec))
        for p in range(processes):
            out_path = Path(tmp) / f"out{p}.json"
            t0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", module, "--worker", str(spec_path), str(out_path)],
                cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=timeout,
            )
            if proc.returncode != 0:
                raise RuntimeError(f"{module} worker {p} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
            results.append(json.loads(out_path.read_text()))
            say(f"  process {p + 1}/{processes} done in {time.perf_counter() - t0:.1f} s")
    return results


def is_worker(argv: Sequence[str]) -> bool:
    """Whether a bench's command line is the ``--worker SPEC OUT`` of :func:`run_workers`."""
    return list(argv[:1]) == ["--worker"]


def worker_main(argv: Sequence[str], work: Callable[[dict[str, Any]], dict[str, Any]]) -> int:
    """The ``--worker SPEC OUT`` side of :func:`run_workers` (``argv`` with ``--worker`` first)."""
    spec = json.loads(Path(argv[1]).read_text())
    result = work(spec)
    Path(argv[2]).write_text(json.dumps(result))
    return 0


def merge_samples(results: Iterable[dict[str, Any]]) -> dict[str, dict[str, list[float]]]:
    """``{case: {name: samples}}`` from every worker, concatenated."""
    merged: dict[str, dict[str, list[float]]] = {}
    for res in results:
        for case, by_name in res["samples"].items():
            for name, vals in by_name.items():
                merged.setdefault(case, {}).setdefault(name, []).extend(vals)
    return merged
