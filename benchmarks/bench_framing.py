"""The response path's framing: client CPU per request with the driver's read loop and v5 segment
codec, and with ours (``pyfactories.connection.CompiledFraming``).

    python -m benchmarks.bench_framing [--rounds N] [--json PATH] [--hosts h1,h2]

Workloads (``bench_timeouts``' callback chains, protocol v5, no compression, the default timeout):

* ``select``: a prepared 1-row SELECT of ``timers_bench.inserts``, 50 chains, the fast path's
  named rows (``fastpath.enable(session, rows="named")``);
* ``insert``: ``bench_timeouts``' prepared 10-column INSERT, 1,000 chains.

Configurations, each in a process of its own, taking turns round by round as in ``bench_timeouts``:

* ``driver``: the driver's ``LibevConnection``;
* ``timers``: ``TimerQueueLibevConnection`` with the driver's framing (:class:`DriverFraming` here):
  ours without the compiled framing;
* ``ours``: ``TimerQueueLibevConnection`` (``fastpath.cluster_options()``): timers and framing.

``ours`` vs. ``timers`` is what the framing alone saves; ``ours`` vs. ``driver`` what a user of
``cluster_options()`` gets. ``--in-flight`` is not used: each workload has its own level.
"""

from __future__ import annotations

import sys
from typing import Any

from cassandra.connection import Connection

from pyfactories.connection import TimerQueueLibevConnection

from . import bench_timeouts, reference
from .pinning import pin, unpin
from .tables import markdown_table

DEPTH = "framing"
WORKLOADS = {"select": 50, "insert": 1000}
CONFIGS = {
    "driver": ("cassandra.io.libevreactor:LibevConnection", "default"),
    "timers": ("benchmarks.bench_framing:DriverFraming", "default"),
    "ours": ("pyfactories.connection:TimerQueueLibevConnection", "default"),
}
BASES = ("driver", "timers")


class DriverFraming(TimerQueueLibevConnection):  # type: ignore[misc,valid-type]
    """Our request timers on the driver's own read loop and segment codec."""

    process_io_buffer = Connection.process_io_buffer
    _enable_checksumming = Connection._enable_checksumming


def run(spec: dict[str, Any], hosts: list[str], port: int, say=print) -> dict[str, Any]:
    servers, spec = bench_timeouts.server_pids(spec, say)
    spec = {**spec, "in_flight": dict(WORKLOADS)}
    pinned = pin(servers, spec.get("server_cpus"))
    cases, info = [], {}
    try:
        for workload, in_flight in WORKLOADS.items():
            found, info[workload] = bench_timeouts.measure_cases(spec, hosts, port, CONFIGS, workload, [in_flight],
                                                                 BASES, say)
            cases += [{**case, "workload": workload} for case in found]
    finally:
        unpin(pinned, pids=servers)
    return {"depth": DEPTH, "config": spec, "configurations": info, "cases": cases, "method": bench_timeouts.METHOD}


def render(section: dict[str, Any]) -> str:
    header = ["workload", "in flight", "configuration", "CPU/request", "requests/s", "CPU vs. driver",
              "CPU vs. timers", "requests/s vs. driver"]
    rows = []
    for case in section["cases"]:
        for name, r in case["results"].items():
            rows.append([case["workload"], str(case["in_flight"]), name, f"{r['cpu_us_per_request']:.1f} µs",
                         f"{r['requests_per_s']:.0f}",
                         reference.with_range(r["cpu_vs_driver"]["median"], r["cpu_vs_driver"]["range"]),
                         reference.with_range(r["cpu_vs_timers"]["median"], r["cpu_vs_timers"]["range"]),
                         reference.with_range(r["qps_vs_driver"]["median"], r["qps_vs_driver"]["range"])])
    cfg = section["config"]
    return "\n".join([
        f"### Framing (protocol v5; {cfg['rounds']} interleaved rounds, medians{reference.pinning_words(cfg)})",
        "",
        markdown_table(header, rows),
        "",
        "`select` = prepared 1-row SELECT, fast path named rows; `insert` = prepared 10-column INSERT. "
        "`driver` = the driver's LibevConnection; `timers` = TimerQueueLibevConnection on the driver's framing; "
        "`ours` = TimerQueueLibevConnection (timers and compiled framing). Ratios: median of per-round ratios "
        "(their range).",
    ]) + "\n"


if __name__ == "__main__":
    sys.exit(bench_timeouts.main(module=sys.modules[__name__]))
