"""Every report of a profile at once: ``summary.json``, ``summary.md`` and ``index.html`` written;
printed: the answer first (:mod:`profiling.report.answer`: CPU per query, where it goes, what everything
on saves, one line per finding), then the table, the instrumentation's cost in one line, the warm-up
check and the warnings (each once); the advice per row when there is no answer to give.

The harness (:mod:`profiling.harness.runner`) and the profiles of a program of your own
(:mod:`profiling.service.results`) both end here, each with the header lines of its own.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from ..harness import repeats
from . import advice, answer, summary


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
    first = answer.lines(rows)
    if first:
        print("\n" + "\n".join(first))
    print("\nthe details (per combination; every figure in summary.json):\n" + summary.table(rows))
    cost = summary.cost_line(rows)
    if cost:
        print(cost)
    for check in (repeats.first_round_line(rows), repeats.check_line(rows)):
        if check:
            print(check)
    for warning, names in summary.warnings(rows).items():
        print(f"  {warning} ({names})")
    tips = advice.lines(rows)
    if tips and not answer.findings(rows):  # a selection without the driver default: the advice per row
        print("\nadvice:\n" + "\n".join(f"  - {t}" for t in tips))
    if meta.get("interrupted"):
        print(f"\n[profiling] interrupted: {meta['interrupted']}")
    print("\n" + "\n".join(f"[profiling] wrote {p}" for p in paths))
    print(f"[profiling] open {os.path.abspath(paths[-1])}", flush=True)
    return paths
