"""Coalesced writes: client CPU per request with the driver's ``push``/``handle_write`` (a loop
wake-up and a ``send()`` per request) and with ours (``pyfactories._writes.CoalescedWrites``).

    python -m benchmarks.bench_writes [--rounds N] [--json PATH] [--hosts h1,h2]

Workloads (``bench_timeouts``' callback chains, protocol v5, no compression, the default timeout):

* ``insert``: ``bench_timeouts``' prepared 10-column INSERT, 1,000 and 50 chains;
* ``select``: ``bench_framing``'s prepared 1-row SELECT with the fast path's named rows, 50 chains.

Configurations, each in a process of its own, taking turns round by round as in ``bench_timeouts``:

* ``driver``: the driver's ``LibevConnection``;
* ``uncoalesced``: ``TimerQueueLibevConnection`` with the driver's writes (:class:`DriverWrites`):
  timers and compiled framing, what ``cluster_options()`` gave before writes were coalesced;
* ``ours``: ``TimerQueueLibevConnection`` (``fastpath.cluster_options()``): timers, framing, writes.

``ours`` vs. ``uncoalesced`` is what coalescing alone saves. ``--in-flight`` is not used.
"""

from __future__ import annotations

import sys
from typing import Any

from cassandra.io.libevreactor import LibevConnection

from pyfactories.connection import TimerQueueLibevConnection

from . import bench_framing, bench_timeouts, reference
from .pinning import pin, unpin
from .tables import markdown_table

DEPTH = "writes"
WORKLOADS = {"insert": (1000, 50), "select": (50,)}
CONFIGS = {  # bench_framing's driver and ours, and ours with the driver's writes between them
    "driver": bench_framing.CONFIGS["driver"],
    "uncoalesced": ("benchmarks.bench_writes:DriverWrites", "default"),
    "ours": bench_framing.CONFIGS["ours"],
}
BASES = ("driver", "uncoalesced")


class DriverWrites(TimerQueueLibevConnection):  # type: ignore[misc,valid-type]
    """Our timers and framing with the driver's own ``push``, ``handle_read`` and ``handle_write``."""

    push = LibevConnection.push
    handle_read = LibevConnection.handle_read
    handle_write = LibevConnection.handle_write


def run(spec: dict[str, Any], hosts: list[str], port: int, say=print) -> dict[str, Any]:
    servers, spec = bench_timeouts.server_pids(spec, say)
    spec = {**spec, "in_flight": {w: list(levels) for w, levels in WORKLOADS.items()}}
    pinned = pin(servers, spec.get("server_cpus"))
    try:
        cases, info = bench_framing.measure_workloads(spec, hosts, port, CONFIGS, WORKLOADS, BASES, say)
    finally:
        unpin(pinned, pids=servers)
    return {"depth": DEPTH, "config": spec, "configurations": info, "cases": cases, "method": bench_timeouts.METHOD}


def render(section: dict[str, Any]) -> str:
    header = ["workload", "in flight", "configuration", "CPU/request", "requests/s", "CPU vs. driver",
              "CPU vs. uncoalesced", "requests/s vs. driver"]
    cfg = section["config"]
    return "\n".join([
        f"### Coalesced writes (protocol v5; {cfg['rounds']} interleaved rounds, medians"
        f"{reference.pinning_words(cfg)})",
        "",
        markdown_table(header, bench_framing.case_rows(section["cases"], BASES)),
        "",
        "`insert` = prepared 10-column INSERT; `select` = prepared 1-row SELECT, fast path named rows. "
        "`driver` = the driver's LibevConnection; `uncoalesced` = TimerQueueLibevConnection with the driver's "
        "push, handle_read and handle_write; `ours` = TimerQueueLibevConnection (timers, compiled framing, coalesced writes). "
        "Ratios: median of per-round ratios (their range).",
    ]) + "\n"


if __name__ == "__main__":
    sys.exit(bench_timeouts.main(module=sys.modules[__name__]))
