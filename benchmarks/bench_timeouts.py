"""Request timeouts: client CPU per request with the driver's timers and with ours, at 50 and 1,000 in flight.

    python -m benchmarks.bench_timeouts [--rounds N] [--json PATH] [--hosts h1,h2]

Workload: callback chains (``profiling.harness.patterns``' ``callback_full_pipeline``) of a prepared INSERT
of 10 columns into ``timers_bench.inserts`` (``benchmarks.data.inserts``), 50 and 1,000 chains. Three
configurations, run as every connection benchmark runs them (``benchmarks.e2e.connection_bench``):

* ``driver``: the driver's ``LibevConnection``, its default request timeout (10 s);
* ``ours``: ``pyfactories.connection.TimerQueueLibevConnection``
  (``connection.cluster_options()``), the same default timeout;
* ``no timeout``: the driver's ``LibevConnection`` with ``timeout=None`` (no timer at all): the floor.

Each configuration runs in a process of its own for the whole run: the driver keeps a cancelled
timer, and the request it refers to, for one timeout (10 s) after the request ended, so in one
process one configuration's leftovers would be collected during the next one's segment. The
processes take turns, round by round (the order rotated each round), the same number of requests
per segment; after one unrecorded round per level to warm up. Client CPU per request is the
measuring process's CPU time (all its threads) over the requests; throughput is requests per
wall-clock second. Figures are medians over rounds; a ratio is the median of per-round ratios
(each against the same round's segment of the other configuration), with their range.

With two CPUs or more the client processes are pinned to the last one (``--client-cpus``), and
the local node (or ``--server-pid``) to the first (``--server-cpus``), as ``bench_e2e`` does.
"""

from __future__ import annotations

import sys
from typing import Any

from .e2e import connection_bench, reference
from .e2e.connection_bench import measure_cases, server_pids
from .harness.pinning import pin, unpin
from .reporting.tables import markdown_table

DEPTH = "timeouts"
CONFIGS = {  # name: (connection class, where it lives; request timeout: the driver's default, or None)
    "driver": ("cassandra.io.libevreactor:LibevConnection", "default"),
    "ours": ("pyfactories.connection:TimerQueueLibevConnection", "default"),
    "no timeout": ("cassandra.io.libevreactor:LibevConnection", None),
}
BASES = ("driver", "no timeout")


def run(spec: dict[str, Any], hosts: list[str], port: int, say=print) -> dict[str, Any]:
    servers, spec = server_pids(spec, say)
    pinned = pin(servers, spec.get("server_cpus"))
    try:
        cases, info = measure_cases(spec, hosts, port, CONFIGS, "insert", spec["in_flight"], BASES, say)
    finally:
        unpin(pinned, pids=servers)
    return {"depth": DEPTH, "config": spec, "configurations": info, "cases": cases, "method": connection_bench.METHOD}


def render(section: dict[str, Any]) -> str:
    header = ["in flight", "configuration", "CPU/request", "requests/s", "CPU vs. driver", "CPU vs. no timeout",
              "requests/s vs. driver"]
    rows = []
    for case in section["cases"]:
        for name, r in case["results"].items():
            rows.append([str(case["in_flight"]), name, f"{r['cpu_us_per_request']:.1f} µs",
                         f"{r['requests_per_s']:.0f}",
                         reference.with_range(r["cpu_vs_driver"]["median"], r["cpu_vs_driver"]["range"]),
                         reference.with_range(r["cpu_vs_no_timeout"]["median"], r["cpu_vs_no_timeout"]["range"]),
                         reference.with_range(r["qps_vs_driver"]["median"], r["qps_vs_driver"]["range"])])
    cfg = section["config"]
    return "\n".join([
        f"### Request timeouts (callback chains of a prepared 10-column INSERT; {cfg['rounds']} interleaved "
        f"rounds, medians{reference.pinning_words(cfg)})",
        "",
        markdown_table(header, rows),
        "",
        "`driver` = the driver's LibevConnection, default timeout (10 s); `ours` = "
        "TimerQueueLibevConnection (connection.cluster_options()), default timeout; `no timeout` = the driver's "
        "LibevConnection with timeout=None. Ratios: median of per-round ratios (their range).",
    ]) + "\n"


if __name__ == "__main__":
    sys.exit(connection_bench.main(sys.modules[__name__]))
