"""Capture the RESULT bodies of the decode-only benchmark from a real Cassandra.

    python -m benchmarks.capture [--hosts h1,h2] [--out benchmarks/fixtures]

Starts (or reuses) the project's local node unless ``--hosts`` or
``PYFACTORIES_HOSTS`` names a cluster, loads the benchmark data set if it is
missing, executes each query below as a prepared statement (as an
application would: the driver asks the server to skip the column metadata and
supplies its own), and records what the connection handed the protocol
handler: protocol version, flags, opcode, body, and the result metadata.
Each capture is decoded again with the driver's handler before it is saved,
and must give the expected number of rows. A node this script started is
stopped at the end.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from profiling.cluster import connect, reach

from . import dataset, fixtures

RESULT_OPCODE = 0x08


@dataclass(frozen=True)
class Capture:
    name: str
    description: str
    query: str
    params: tuple
    rows: int
    fetch_size: int | None = None


KS = dataset.KEYSPACE
CAPTURES: tuple[Capture, ...] = (
    Capture("row1_10col", "1 row x 10 columns (the 'Avoid namedtuple' single-row select)",
            f"SELECT * FROM {KS}.narrow WHERE k = ?", (4242,), 1),
    Capture("page200_10col", "200-row page x 10 columns",
            f"SELECT * FROM {KS}.pages WHERE p = ?", (7,), dataset.PAGE_ROWS, dataset.PAGE_ROWS),
    Capture("row1_50col", "1 row x 50 columns (wide row)",
            f"SELECT * FROM {KS}.wide WHERE p = ? AND c = ?", (3, 42), 1),
    Capture("page200_50col", "200-row page x 50 columns",
            f"SELECT * FROM {KS}.wide WHERE p = ?", (3,), dataset.PAGE_ROWS, dataset.PAGE_ROWS),
    Capture("page200_coll", "200-row page x 10 columns, 6 of them collections/tuples",
            f"SELECT * FROM {KS}.coll WHERE p = ?", (5,), dataset.PAGE_ROWS, dataset.PAGE_ROWS),
)


def _recording_handler(base: Any, sink: list[dict[str, Any]]) -> Any:
    """A subclass of the driver's handler that keeps a copy of every RESULT it decodes."""

    class Recording(base):  # type: ignore[misc, valid-type]
        @classmethod
        def decode_message(cls, protocol_version, *args):
            # the driver's arguments end the same way whether or not protocol features come first
            msg = super().decode_message(protocol_version, *args)
            _user_types, _stream, flags, opcode, body, decompressor, result_metadata = args[-7:]
            if opcode == RESULT_OPCODE:
                sink.append({"protocol_version": protocol_version, "flags": flags, "opcode": opcode,
                             "body": bytes(body), "result_metadata": result_metadata,
                             "compressed": decompressor is not None})
            return msg

    return Recording


def capture_all(session, out_dir: Path, cassandra_version: str, say=print) -> list[Path]:
    import cassandra
    from cassandra.protocol import ProtocolHandler

    paths = []
    for cap in CAPTURES:
        prepared = session.prepare(cap.query)
        if cap.fetch_size:
            prepared.fetch_size = cap.fetch_size
        sink: list[dict[str, Any]] = []
        saved = session.client_protocol_handler
        session.client_protocol_handler = _recording_handler(ProtocolHandler, sink)
        try:
            rs = session.execute(prepared, cap.params)
        finally:
            session.client_protocol_handler = saved
        got = len(rs.current_rows)
        if got != cap.rows or len(sink) != 1:
            raise RuntimeError(f"{cap.name}: expected one RESULT of {cap.rows} rows, got {len(sink)} of {got}")
        rec = sink[0]
        if rec["flags"] & 0x01 and rec["protocol_version"] < 5:
            raise RuntimeError(f"{cap.name}: a compressed body; capture without compression")
        md = rec["result_metadata"] or []
        fx = fixtures.Fixture(
            name=cap.name, description=cap.description, protocol_version=rec["protocol_version"],
            flags=rec["flags"], opcode=rec["opcode"], body=rec["body"],
            columns=[[ks, table, name, ctype.cass_parameterized_type(full=True)] for ks, table, name, ctype in md],
            rows=cap.rows,
            info={
                "query": cap.query, "params": list(cap.params), "fetch_size": cap.fetch_size,
                "metadata_in_body": not md,
                "captured": _dt.date.today().isoformat(), "cassandra": cassandra_version,
                "driver": cassandra.__version__, "dataset_version": dataset.DATASET_VERSION,
            },
        )
        # what is saved must decode again, to the same rows
        again = fixtures.load(fixtures.save(fx, out_dir).stem, out_dir).decode()
        if list(again.parsed_rows) != [tuple(r) for r in rs.current_rows]:
            raise RuntimeError(f"{cap.name}: the saved body does not decode to the rows the query returned")
        p = fixtures.path_of(cap.name, out_dir)
        say(f"{p}: {cap.rows} rows x {fx.cols} columns, body {len(fx.body)} bytes, file {p.stat().st_size} bytes")
        paths.append(p)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.capture", description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", help="comma-separated contact points of your own cluster (nothing is started)")
    ap.add_argument("--port", type=int, help="CQL port (default 9042 or PYFACTORIES_PORT)")
    ap.add_argument("--out", default=str(fixtures.HERE), help="directory of the fixture files")
    args = ap.parse_args(argv)

    from cassandra.query import tuple_factory

    with reach(args.hosts, args.port) as contact:
        cluster, session = connect(contact, row_factory=tuple_factory, **dataset.CONNECT_OPTIONS)
        try:
            dataset.ensure_dataset(session)
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            capture_all(session, out, dataset.cassandra_version(session))
        finally:
            cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
