"""Every report of a profile at once: ``summary.json``, ``summary.md`` and ``index.html`` written,
the table, the instrumentation's cost, the warm-up check, the warnings and the advice printed.

The harness (:mod:`profiling.harness.runner`) and the profiles of a program of your own
(:mod:`profiling.service.results`) both end here, each with the header lines of its own.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from ..harness import repeats
from . import advice, summary


def driver_version() -> str:
    """The driver distribution and version this process imports."""
    import cassandra

    from pyfactories import _driver

    return f"{_driver.distribution()} {cassandra.__version__}"


def publish(rows: list[dict[str, Any]], out: str, meta: dict[str, Any]) -> list[str]:
    """Write and print the reports of ``rows``; ``meta`` (``command`` first) heads them."""
    os.makedirs(out, exist_ok=True)
    meta = {"command": meta.get("command", ""), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            "python": sys.version.split()[0], **{k: v for k, v in meta.items() if k != "command"}}
    advice.annotate(rows)
    paths = [summary.write_json(rows, out), summary.write_markdown(rows, out, meta),
             summary.write_html(rows, out, meta)]
    print("\n" + summary.table(rows))
    costs = summary.costs(rows)
    if costs:
        print("\n".join(costs))
    if repeats.check_line(rows):
        print(repeats.check_line(rows))
    for row in rows:
        for w in row.get("warnings", []):
            print(f"  {row['workload']} {row['pattern']} {row['factory']}: {w}")
    tips = advice.lines(rows)
    if tips:
        print("\nadvice:\n" + "\n".join(f"  - {t}" for t in tips))
    if meta.get("interrupted"):
        print(f"\n[profiling] interrupted: {meta['interrupted']}")
    print("\n" + "\n".join(f"[profiling] wrote {p}" for p in paths))
    print(f"[profiling] open {os.path.abspath(paths[-1])}", flush=True)
    return paths
