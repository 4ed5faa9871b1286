"""Coalesced writes: client CPU per request with the driver's ``push``/``handle_write`` (a loop
wake-up and a ``send()`` per request) and with ours (``pyfactories.connection._writes_py.CoalescedWrites``).

    python -m benchmarks.bench_writes [--rounds N] [--json PATH] [--hosts h1,h2]

Workloads (``benchmarks.e2e.connection_bench``' callback chains, protocol v5, no compression, the default
timeout):

* ``insert``: the prepared 10-column INSERT (``benchmarks.data.inserts``), 1,000 and 50 chains;
* ``select``: ``bench_framing``'s prepared 1-row SELECT with the fast path's named rows, 50 chains.

Configurations, each in a process of its own, taking turns round by round as in ``bench_timeouts``:

* ``driver``: the driver's ``LibevConnection``;
* ``uncoalesced``: ``TimerQueueLibevConnection`` with the driver's writes (:class:`DriverWrites`):
  timers and compiled framing, what ``cluster_options()`` gave before writes were coalesced;
* ``ours``: ``TimerQueueLibevConnection`` (``connection.cluster_options()``): timers, framing, writes.

``ours`` vs. ``uncoalesced`` is what coalescing alone saves. ``--in-flight`` is not used.

Beside them, in this process and without a server (:func:`micro`): the writes alone, the driver's
``push``/``handle_write`` vs. ours, taking turns: batches of 160-byte requests pushed, then written
until the queue is empty, to a loopback TCP socket (the driver's socket options) drained between
batches. The loop's wake-up is a no-op there (not counted).
"""

from __future__ import annotations

import socket
import statistics
import sys
import threading
import time
from collections import deque
from typing import Any

from cassandra.connection import Connection
from cassandra.io import libevreactor

from cassandra.io.libevreactor import LibevConnection

from pyfactories.connection import TimerQueueLibevConnection

from . import bench_framing
from .e2e import connection_bench, reference
from .reporting.tables import markdown_table

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


class _IdleLoop:
    """The driver's loop as ``push`` sees it, for :func:`micro`: no thread, a wake-up that does nothing."""

    _thread = None

    def notify(self) -> None:
        pass


def _writer(cls: type, server: socket.socket) -> tuple[Any, socket.socket]:
    conn = cls.__new__(cls)
    Connection.__init__(conn, "127.0.0.1")
    conn.deque, conn._deque_lock = deque(), threading.Lock()
    conn._socket = socket.create_connection(server.getsockname())
    conn._socket.setblocking(False)
    peer, _ = server.accept()
    peer.setblocking(False)
    return conn, peer


def _drain(peer: socket.socket) -> None:
    try:
        while peer.recv(1 << 20):
            pass
    except BlockingIOError:
        pass


def micro(rounds: int = 21, batches: int = 40, batch: int = 250, size: int = 160) -> dict[str, Any]:
    """Microseconds of CPU per request of the writes alone (push, then write until the queue is
    empty), the driver's and ours, in turns; ``batch`` requests queued before each write."""
    msg = bytes(size)
    saved, libevreactor._global_loop = libevreactor._global_loop, _IdleLoop()
    server = socket.create_server(("127.0.0.1", 0))
    pairs = {"driver": _writer(LibevConnection, server), "ours": _writer(TimerQueueLibevConnection, server)}
    series: dict[str, list[float]] = {"driver": [], "ours": []}
    try:
        for r in range(rounds):
            for label in ("driver", "ours")[::1 if r % 2 else -1]:
                conn, peer = pairs[label]
                spent = 0.0
                for _ in range(batches):
                    t0 = time.process_time()
                    for _ in range(batch):
                        conn.push(msg)
                    while conn.deque:
                        conn.handle_write(None, 0)
                    spent += time.process_time() - t0
                    _drain(peer)
                series[label].append(spent / (batches * batch) * 1e6)
    finally:
        libevreactor._global_loop = saved
        for conn, peer in pairs.values():
            conn._socket.close()
            peer.close()
        server.close()
    ratios = [o / d for o, d in zip(series["ours"], series["driver"])]
    return {"driver_us": statistics.median(series["driver"]), "ours_us": statistics.median(series["ours"]),
            "ratio": statistics.median(ratios), "range": [min(ratios), max(ratios)], "batch": batch,
            "request_bytes": size}


def run(spec: dict[str, Any], hosts: list[str], port: int, say=print) -> dict[str, Any]:
    return connection_bench.run_pinned(spec, hosts, port, CONFIGS, WORKLOADS, BASES, ("writes_alone", micro),
                                       DEPTH, say)


def render(section: dict[str, Any]) -> str:
    header = ["workload", "in flight", "configuration", "CPU/request", "requests/s", "CPU vs. driver",
              "CPU vs. uncoalesced", "requests/s vs. driver"]
    cfg = section["config"]
    return "\n".join([
        f"### Coalesced writes (protocol v5; {cfg['rounds']} interleaved rounds, medians"
        f"{reference.pinning_words(cfg)})",
        "",
        markdown_table(header, connection_bench.case_rows(section["cases"], BASES)),
        "",
        "`insert` = prepared 10-column INSERT; `select` = prepared 1-row SELECT, fast path named rows. "
        "`driver` = the driver's LibevConnection; `uncoalesced` = TimerQueueLibevConnection with the driver's "
        "push, handle_read and handle_write; `ours` = TimerQueueLibevConnection (timers, compiled framing, coalesced writes). "
        "Ratios: median of per-round ratios (their range).",
        "",
        *_alone_lines(section.get("writes_alone")),
    ]) + "\n"


def _alone_lines(alone: dict[str, Any] | None) -> list[str]:
    if not alone:
        return []
    return [f"The writes alone ({alone['batch']} requests of {alone['request_bytes']} bytes queued per write, "
            "in this process, no server): CPU per request, driver "
            f"{alone['driver_us']:.2f} µs, ours {alone['ours_us']:.2f} µs, "
            f"{reference.with_range(alone['ratio'], alone['range'])}."]


if __name__ == "__main__":
    sys.exit(connection_bench.main(sys.modules[__name__]))
