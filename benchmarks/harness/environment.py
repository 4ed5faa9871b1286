"""The environment record of a run: machine, Python, driver and package versions, the checkout."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from profiling.factories import fastpath_status
from pyfactories import _driver

from .. import REPO_ROOT


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
    """Machine, Python, driver and package versions (Cassandra's is added by the depths that reach it)."""
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
            "distribution": _driver.distribution(),
            "version": cassandra.__version__,
            "cython": bool(getattr(cassandra.protocol, "HAVE_CYTHON", False)),
            "connection_class": getattr(cassandra.cluster.DefaultConnection, "__name__", "?"),
        },
        "pyfactories": {
            "version": pyfactories.__version__,
            "impl": pyfactories.__impl__,
            "fastpath": fastpath_status()[0],
        },
        "tools": {"cython": _version("Cython"), "pyperf": _version("pyperf"), "matplotlib": _version("matplotlib")},
        "git": _git(),
    }
