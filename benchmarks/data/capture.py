"""Capturing the RESULT bodies of the decode-only benchmark from a real Cassandra
(``python -m benchmarks.capture``).

Each query of ``benchmarks.data.fixtures.CAPTURES`` is executed as a prepared statement (as an
application would: the driver asks the server to skip the column metadata and supplies its own),
and what the connection handed the protocol handler is recorded: protocol version, flags, opcode,
body, and the result metadata. Each capture is decoded again with the driver's handler before it is
saved, and must give the expected number of rows.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from . import dataset, fixtures

RESULT_OPCODE = 0x08


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
    for cap in fixtures.CAPTURES:
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
