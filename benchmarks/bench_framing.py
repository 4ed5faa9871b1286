"""The response path's framing: client CPU per request with the driver's read loop and v5 segment
codec, and with ours (``pyfactories.connection.CompiledFraming``).

    python -m benchmarks.bench_framing [--rounds N] [--json PATH] [--hosts h1,h2]

Workloads (``benchmarks.e2e.connection_bench``' callback chains, protocol v5, no compression, the default
timeout):

* ``select``: a prepared 1-row SELECT of ``timers_bench.inserts``, 50 chains, the fast path's
  named rows (``pyfactories.decoding.enable(session, rows="named")``);
* ``insert``: the prepared 10-column INSERT (``benchmarks.data.inserts``), 1,000 chains.

Configurations, each in a process of its own, taking turns round by round as in ``bench_timeouts``:

* ``driver``: the driver's ``LibevConnection``;
* ``timers``: ``TimerQueueLibevConnection`` with the driver's framing (:class:`DriverFraming` here):
  ours without the compiled framing;
* ``ours``: ``TimerQueueLibevConnection`` (``connection.cluster_options()``): timers and framing.

``ours`` vs. ``timers`` is what the framing alone saves; ``ours`` vs. ``driver`` what a user of
``cluster_options()`` gets. ``--in-flight`` is not used: each workload has its own level.

Beside them, in this process and without a server (:func:`micro`): the framing's own CPU per
request, the driver's loop and codec vs. ours, taking turns: encoding one 80-byte request into
a segment, and reading 100-byte responses from reads of 10 segments (v5), or 10 frames (v4).
"""

from __future__ import annotations

import io
import statistics
import sys
import time
from typing import Any, Callable

from cassandra import segment
from cassandra.connection import Connection

from pyfactories.connection import TimerQueueLibevConnection, framing

from .e2e import connection_bench, reference
from .reporting.tables import markdown_table

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


class _Sink(Connection):
    """A driver connection without a socket whose ``process_msg`` only counts."""

    def __init__(self, version: int, codec: Any) -> None:
        super().__init__("127.0.0.1", protocol_version=version)
        self.delivered = 0
        if codec is not None:
            self._io_buffer.set_checksumming_buffer()
            self._is_checksumming_enabled, self._segment_codec = True, codec

    def process_msg(self, header: Any, body: bytes) -> None:
        self.delivered += 1


class _OurSink(_Sink):
    process_io_buffer = framing.process_io_buffer


def _read_case(version: int, per_read: int = 10, body: int = 100) -> Callable[[type], Callable[[], None]]:
    frame = bytes([version | 0x80, 0, 0, 1, 8]) + body.to_bytes(4, "big") + bytes(body)
    if version >= 5:
        out = io.BytesIO()
        for _ in range(per_read):
            segment.SegmentCodec().encode(out, frame)
        data = out.getvalue()
    else:
        data = frame * per_read

    def make(cls: type) -> Callable[[], None]:
        conn = cls(version, framing.SegmentCodec() if cls is _OurSink and version >= 5 else
                   segment.SegmentCodec() if version >= 5 else None)

        def one_read() -> None:
            conn._iobuf.write(data)
            conn.process_io_buffer()
        return one_read
    return make


def micro(rounds: int = 21, n: int = 2000) -> dict[str, Any]:
    """Microseconds of CPU per request of the framing alone, the driver's and ours, in turns."""
    msg = bytes(80)
    cases: dict[str, tuple[Callable[[], None], Callable[[], None], int]] = {
        "encode a request (v5)": (lambda: segment.SegmentCodec().encode(io.BytesIO(), msg),
                                  lambda: framing.SegmentCodec().encode(io.BytesIO(), msg), 1),
        "read a response (v5, 10 segments a read)": (_read_case(5)(_Sink), _read_case(5)(_OurSink), 10),
        "read a response (v4, 10 frames a read)": (_read_case(4)(_Sink), _read_case(4)(_OurSink), 10),
    }
    out = {}
    for name, (driver, ours, per_call) in cases.items():
        series: dict[str, list[float]] = {"driver": [], "ours": []}
        for r in range(rounds):
            for label, fn in (("driver", driver), ("ours", ours))[::1 if r % 2 else -1]:
                t0 = time.process_time()
                for _ in range(n):
                    fn()
                series[label].append((time.process_time() - t0) / (n * per_call) * 1e6)
        ratios = [o / d for o, d in zip(series["ours"], series["driver"])]
        out[name] = {"driver_us": statistics.median(series["driver"]), "ours_us": statistics.median(series["ours"]),
                     "ratio": statistics.median(ratios), "range": [min(ratios), max(ratios)]}
    return out


def run(spec: dict[str, Any], hosts: list[str], port: int, say=print) -> dict[str, Any]:
    return connection_bench.run_pinned(spec, hosts, port, CONFIGS, {w: [n] for w, n in WORKLOADS.items()}, BASES,
                                       ("framing_alone", micro), DEPTH, say)


def render(section: dict[str, Any]) -> str:
    header = ["workload", "in flight", "configuration", "CPU/request", "requests/s", "CPU vs. driver",
              "CPU vs. timers", "requests/s vs. driver"]
    rows = connection_bench.case_rows(section["cases"], BASES)
    cfg = section["config"]
    alone = [[name, f"{r['driver_us']:.2f} µs", f"{r['ours_us']:.2f} µs",
              reference.with_range(r["ratio"], r["range"])] for name, r in section.get("framing_alone", {}).items()]
    return "\n".join([
        f"### Framing (protocol v5; {cfg['rounds']} interleaved rounds, medians{reference.pinning_words(cfg)})",
        "",
        markdown_table(header, rows),
        "",
        "`select` = prepared 1-row SELECT, fast path named rows; `insert` = prepared 10-column INSERT. "
        "`driver` = the driver's LibevConnection; `timers` = TimerQueueLibevConnection on the driver's framing; "
        "`ours` = TimerQueueLibevConnection (timers and compiled framing). Ratios: median of per-round ratios "
        "(their range).",
        "",
        "The framing alone (CPU per request, in this process, no server):",
        "",
        markdown_table(["step", "driver", "ours", "ours vs. driver"], alone),
    ]) + "\n"


if __name__ == "__main__":
    sys.exit(connection_bench.main(sys.modules[__name__]))
