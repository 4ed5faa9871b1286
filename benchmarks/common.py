"""What the benchmarks share: the factories by name, the timing loop, worker
processes, statistics, the environment record and table formatting."""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

REPO_ROOT = Path(__file__).resolve().parents[1]
SCHEMA_VERSION = 1

# --- factories -----------------------------------------------------------------------------

#: The driver's factories, then ours, in the order tables show them.
DRIVER = ("tuple", "named_tuple", "dict", "ordered_dict")
OURS = ("cached_named_tuple", "pf_dict", "pf_ordered_dict")
#: The pure-Python twins of ours (``pyfactories._python``): extra columns where cheap.
PYTHON_TWINS = ("py_cached_named_tuple", "py_dict", "py_ordered_dict")
#: Which driver factory each of ours replaces (the "vs." columns).
COUNTERPART = {
    "cached_named_tuple": "named_tuple",
    "pf_dict": "dict",
    "pf_ordered_dict": "ordered_dict",
    "py_cached_named_tuple": "named_tuple",
    "py_dict": "dict",
    "py_ordered_dict": "ordered_dict",
    "fastpath_named": "named_tuple",
    "fastpath_dict": "dict",
}
#: Short labels for narrow terminal columns.
SHORT = {
    "tuple": "tuple",
    "named_tuple": "named",
    "dict": "dict",
    "ordered_dict": "odict",
    "cached_named_tuple": "pf_named",
    "pf_dict": "pf_dict",
    "pf_ordered_dict": "pf_odict",
    "py_cached_named_tuple": "py_named",
    "py_dict": "py_dict",
    "py_ordered_dict": "py_odict",
    "copy_tuples": "copy",
    "copy_tuples_kept": "copy_kept",
    "cached_named_tuple_kept": "pf_named_kept",
    "fastpath_named": "fp_named",
    "fastpath_dict": "fp_dict",
}


def copy_tuples(colnames: Sequence[str], rows: Sequence[list]) -> list[tuple]:
    """The baseline "copy the rows into new plain tuples".

    It must be called with the rows as *lists*: ``tuple(t)`` of a tuple returns
    ``t`` itself, so copying tuples would allocate nothing.
    """
    return list(map(tuple, rows))


def row_factories(include_python: bool = True) -> "OrderedDict[str, Callable[[Any, Any], Any]]":
    """The row factories that need no server, by name (the names of ``profiling.factories``)."""
    from profiling.factories import BUILTIN

    out: OrderedDict[str, Callable[[Any, Any], Any]] = OrderedDict()
    for name in DRIVER + OURS:
        out[name] = BUILTIN[name].row_factory
    if include_python:
        from pyfactories import _python

        out["py_cached_named_tuple"] = _python.cached_named_tuple_factory
        out["py_dict"] = _python.dict_factory
        out["py_ordered_dict"] = _python.ordered_dict_factory
    return out


def fastpath_status() -> tuple[list[str], str | None]:
    """The fast-path choices usable in this build, or ``([], why not)``.

    ``pyfactories.fastpath`` may be absent, or present but off (pure-Python
    build, other driver version): it then warns on import, which is expected
    here and not repeated.
    """
    from profiling.factories import BUILTIN, available

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        names = [n for n in available() if BUILTIN[n].family == "fastpath"]
        if not names:
            return [], "pyfactories.fastpath is not in this build"
        fp = importlib.import_module("pyfactories.fastpath")
    if not getattr(fp, "AVAILABLE", True):
        return [], f"pyfactories.fastpath is off: {getattr(fp, 'UNAVAILABLE_REASON', '?')}"
    return names, None


def fastpath_names() -> list[str]:
    """The fast-path choices usable in this build (see :func:`fastpath_status`)."""
    return fastpath_status()[0]


def clear_caches() -> None:
    import pyfactories
    from pyfactories import _python

    pyfactories.cache_clear()
    _python.cache_clear()


# --- timing --------------------------------------------------------------------------------

perf_counter_ns = time.perf_counter_ns


def time_loops(fn: Callable[[Any, Any], Any], a: Any, b: Any, loops: int) -> int:
    """Nanoseconds for ``loops`` calls of ``fn(a, b)`` (the result of each call is dropped)."""
    it = range(loops)
    t0 = perf_counter_ns()
    for _ in it:
        fn(a, b)
    return perf_counter_ns() - t0


def time_loops_kept(fn: Callable[[Any, Any], Any], a: Any, b: Any, loops: int) -> int:
    """Like :func:`time_loops`, but every result stays alive until the sample ends.

    With the results dropped at once, the rows of one call are freed before the
    next call: plain tuples then come back from CPython's tuple free list (up to
    2,000 per length) and never count towards a collection, which instances of a
    namedtuple class cannot do. Keeping the results shows the cost without that
    recycling, as when an application holds on to its rows.
    """
    it = range(loops)
    sink: list[Any] = []
    keep = sink.append
    t0 = perf_counter_ns()
    for _ in it:
        keep(fn(a, b))
    dt = perf_counter_ns() - t0
    del sink[:]
    return dt


def calibrate(fn: Callable[[Any, Any], Any], a: Any, b: Any, target_ns: int, max_loops: int = 1 << 24,
              timer: Callable[[Callable[[Any, Any], Any], Any, Any, int], int] = time_loops) -> int:
    """Loops per sample so that one sample lasts about ``target_ns``; warms up on the way.

    The first call fills the caches (our factories' column-set caches, the
    interpreter's specialisations); the loop count grows tenfold until a sample
    is long enough to extrapolate from, then one full sample is run and dropped.
    """
    fn(a, b)
    loops = 1
    while True:
        dt = timer(fn, a, b, loops)
        if dt * 10 >= target_ns or loops >= max_loops:
            loops = max(1, min(max_loops, round(loops * target_ns / max(dt, 1))))
            break
        loops *= 10
    timer(fn, a, b, loops)  # warm-up sample, not kept
    return loops


Cell = tuple  # (name, fn, a, b) or (name, fn, a, b, keep_results)


def interleaved_samples(cells: Sequence[Cell], rounds: int, target_ns: int
                        ) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Time every cell ``rounds`` times, taking turns: A B C, B C A, C A B, ...

    A cell is ``(name, fn, a, b)``, timed as ``fn(a, b)`` with each result
    dropped at once, or ``(name, fn, a, b, True)`` to keep the results of a
    sample alive (:func:`time_loops_kept`). Returns nanoseconds per call, one
    value per round, for each cell name, and the loops per sample. Rotating the
    order means no cell always runs right after the same neighbour (whose
    garbage or cache misses it might inherit).
    """
    timers = {c[0]: (time_loops_kept if len(c) > 4 and c[4] else time_loops) for c in cells}
    loops = {c[0]: calibrate(c[1], c[2], c[3], target_ns, timer=timers[c[0]]) for c in cells}
    samples: dict[str, list[float]] = {c[0]: [] for c in cells}
    n = len(cells)
    for r in range(rounds):
        k = r % n if n else 0
        for cell in list(cells[k:]) + list(cells[:k]):
            name, fn, a, b = cell[:4]
            samples[name].append(timers[name](fn, a, b, loops[name]) / loops[name])
    return samples, loops


def settle_heap() -> None:
    """Collect, then freeze what is alive, so the collector skips the benchmark's inputs.

    The collector stays enabled (row factories run with it enabled in a real
    service); it only stops rescanning the long-lived inputs at every collection.
    """
    gc.collect()
    gc.freeze()


# --- statistics ----------------------------------------------------------------------------

def summarize(values: Sequence[float]) -> dict[str, float]:
    """Median and spread of a list of samples."""
    vals = sorted(values)
    n = len(vals)
    if n == 0:
        return {"n": 0}
    q = statistics.quantiles(vals, n=4, method="inclusive") if n >= 2 else [vals[0]] * 3
    med = statistics.median(vals)
    return {
        "n": n,
        "median": med,
        "min": vals[0],
        "max": vals[-1],
        "q1": q[0],
        "q3": q[2],
        "rel_iqr": (q[2] - q[0]) / med if med else 0.0,
    }


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def paired_ratio(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Median of per-round ratios a[i]/b[i]: drift between rounds cancels out."""
    pairs = [x / y for x, y in zip(a, b) if y]
    return statistics.median(pairs) if pairs else None


# --- worker processes ----------------------------------------------------------------------

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


def worker_main(argv: Sequence[str], work: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """The ``--worker SPEC OUT`` side of :func:`run_workers`."""
    spec = json.loads(Path(argv[0]).read_text())
    result = work(spec)
    Path(argv[1]).write_text(json.dumps(result))


def merge_samples(results: Iterable[dict[str, Any]]) -> dict[str, dict[str, list[float]]]:
    """``{case: {name: samples}}`` from every worker, concatenated."""
    merged: dict[str, dict[str, list[float]]] = {}
    for res in results:
        for case, by_name in res["samples"].items():
            for name, vals in by_name.items():
                merged.setdefault(case, {}).setdefault(name, []).extend(vals)
    return merged


# --- environment ---------------------------------------------------------------------------

def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _mem_total_mb() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError):
        pass
    return None


def _git() -> dict[str, Any]:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT,
                               capture_output=True, text=True, timeout=10)
        if head.returncode == 0:
            return {"commit": head.stdout.strip(), "dirty": bool(dirty.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        pass
    return {}


def _version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def environment() -> dict[str, Any]:
    """Machine, Python, driver and package versions (Cassandra's is added by the end-to-end bench)."""
    import cassandra
    import cassandra.cluster
    import cassandra.protocol

    import pyfactories

    try:
        cpus_usable: int | None = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus_usable = os.cpu_count()
    return {
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "platform": platform.platform(),
            "arch": platform.machine(),
            "cpu": _cpu_model(),
            "cpus": os.cpu_count(),
            "cpus_usable": cpus_usable,
            "mem_total_mb": _mem_total_mb(),
            "loadavg_at_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        },
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "compiler": platform.python_compiler(),
            "executable": sys.executable,
        },
        "driver": {
            "version": cassandra.__version__,
            "cython": bool(getattr(cassandra.protocol, "HAVE_CYTHON", False)),
            "connection_class": getattr(cassandra.cluster.DefaultConnection, "__name__", "?"),
        },
        "pyfactories": {
            "version": pyfactories.__version__,
            "impl": pyfactories.__impl__,
            "fastpath": fastpath_names(),
        },
        "tools": {"cython": _version("Cython"), "pyperf": _version("pyperf"), "matplotlib": _version("matplotlib")},
        "git": _git(),
    }


# --- output --------------------------------------------------------------------------------

def write_json(path: str | os.PathLike[str], data: dict[str, Any]) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    return p


def load_json(path: str | os.PathLike[str]) -> dict[str, Any]:
    return json.loads(Path(path).read_text())


def fmt_ns(ns: float | None) -> str:
    """A duration given in nanoseconds, in the unit that keeps 3-4 significant digits."""
    if ns is None:
        return "-"
    if ns < 1_000:
        return f"{ns:.0f} ns" if ns >= 100 else f"{ns:.1f} ns"
    if ns < 1_000_000:
        return f"{ns / 1e3:.3g} µs" if ns < 10_000 else f"{ns / 1e3:.1f} µs"
    return f"{ns / 1e6:.3g} ms" if ns < 10_000_000 else f"{ns / 1e6:.1f} ms"


def fmt_ratio(r: float | None) -> str:
    if r is None:
        return "-"
    if r >= 100:
        return f"{r:.0f}x"
    if r >= 10:
        return f"{r:.1f}x"
    return f"{r:.2f}x"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]], align: Sequence[str] | None = None) -> str:
    """A GitHub markdown table, padded so it also reads well in a terminal."""
    body = [[str(c) for c in row] for row in rows]
    cols = len(header)
    widths = [max([len(str(header[i]))] + [len(r[i]) for r in body]) for i in range(cols)]
    align = list(align) if align else ["l"] + ["r"] * (cols - 1)

    def line(cells: Sequence[str]) -> str:
        out = []
        for i, c in enumerate(cells):
            out.append(c.ljust(widths[i]) if align[i] == "l" else c.rjust(widths[i]))
        return "| " + " | ".join(out) + " |"

    sep = "|" + "|".join(("-" * (widths[i] + 1) + ":") if align[i] == "r" else ("-" * (widths[i] + 2))
                         for i in range(cols)) + "|"
    return "\n".join([line([str(h) for h in header]), sep] + [line(r) for r in body])


def import_optional(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def apply_overrides(spec: dict, processes: int | None, rounds: int | None) -> dict:
    """``--processes``/``--rounds`` from the command line, over the size's defaults."""
    if processes:
        spec["processes"] = processes
    if rounds:
        spec["rounds"] = rounds
    return spec


def print_and_save(key: str, section: dict, render, json_path: str | None) -> None:
    """Print a bench's table, and write it with the environment to ``json_path`` if given."""
    print()
    print(render(section))
    if json_path:
        path = write_json(json_path, {"schema": SCHEMA_VERSION, "env": environment(), key: section})
        print(f"\nJSON: {path}")


def bench_parser(module: str, doc: str | None, sizes: Iterable[str], offline: bool = False
                 ) -> argparse.ArgumentParser:
    """The options every ``python -m benchmarks.bench_x`` shares: ``--size`` and ``--json``; with
    ``offline`` also those of the two benches run in worker processes (no server)."""
    ap = argparse.ArgumentParser(prog=f"python -m {module}", description=(doc or "").split("\n\n")[0])
    ap.add_argument("--size", choices=sorted(sizes), default="quick")
    ap.add_argument("--json", metavar="PATH", help="write the results (with the environment) here")
    if offline:
        ap.add_argument("--processes", type=int, help="worker processes (default: by size)")
        ap.add_argument("--rounds", type=int, help="rounds per process (default: by size)")
        ap.add_argument("--no-python", action="store_true", help="leave out the pure-Python twins")
    return ap
