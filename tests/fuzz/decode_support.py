"""What the decode fuzzers share: RESULT bodies as a server sends them (every metadata layout), the
offsets of their int fields (to lie in), and the driver's and the fast path's outcome of a body.

Not a test module: imported by ``tests/fuzz/test_decode_*.py``.
"""

import struct

from cassandra import DriverException
from cassandra.protocol import ProtocolHandler
from cassandra.query import dict_factory, named_tuple_factory, tuple_factory

from pyfactories import _driver
from pyfactories.decoding import _fastpath
from pyfactories import decoding
from tests.result_bodies import (GLOBAL_TABLES_SPEC, HAS_MORE_PAGES, METADATA_ID, NO_METADATA, ROWS, string,
                                 type_spec, value)

RESULT = 0x08
KINDS = ("tuple", "named", "dict")
FACTORY = {"named": named_tuple_factory, "dict": dict_factory, "tuple": tuple_factory}
MalformedResult = _fastpath.MalformedResult

#: How the body carries its columns: one table spec for all, one per column, none (prepared).
LAYOUTS = ("global", "per_column", "no_metadata")


def build(columns, rows, protocol_version, layout, *, paging_state=None, metadata_id=None, keyspace="ks",
          table="t"):
    """``(body, int_fields)``: a ROWS body, and the offsets of its [int] fields (flags, column count,
    paging state length, row count, each value's length), for mutations to lie in."""
    out = bytearray(struct.pack(">i", ROWS))
    fields = []
    flags = {"global": GLOBAL_TABLES_SPEC, "per_column": 0, "no_metadata": NO_METADATA}[layout]
    if paging_state is not None:
        flags |= HAS_MORE_PAGES
    if metadata_id is not None and layout != "no_metadata":
        flags |= METADATA_ID
    fields.append(len(out))
    out += struct.pack(">i", flags)
    fields.append(len(out))
    out += struct.pack(">i", len(columns))
    if paging_state is not None:
        fields.append(len(out))
        out += struct.pack(">i", len(paging_state)) + paging_state
    if layout != "no_metadata":
        if metadata_id is not None:
            out += struct.pack(">H", len(metadata_id)) + metadata_id
        if layout == "global":
            out += string(keyspace) + string(table)
        for name, t in columns:
            if layout == "per_column":
                out += string(keyspace) + string(table)
            out += string(name) + type_spec(t)
    fields.append(len(out))
    out += struct.pack(">i", len(rows))
    for row in rows:
        for (_, t), v in zip(columns, row):
            fields.append(len(out))
            out += value(t, v, protocol_version)
    return bytes(out), fields


def decode(handler, body, protocol_version, result_metadata, user_types=None):
    return _driver.decode_message(handler, protocol_version, user_types if user_types is not None else {}, 1, 0,
                                  RESULT, body, None, result_metadata)


def _type_names(types):
    return [t.cql_parameterized_type() if isinstance(t, type) else repr(t) for t in types]


def _message_view(msg):
    """The attributes a decoded message has, and their values (types and metadata by their CQL names)."""
    out = {}
    for name, val in sorted(vars(msg).items()):
        if name == "parsed_rows":
            continue
        if name == "column_types":
            val = _type_names(val)
        elif name == "column_metadata" and val is not None:
            val = [(*md[:3], _type_names([md[3]])[0]) for md in val]
        out[name] = val
    return out


def _rows_view(kind, rows):
    """Rows as comparable values: the values, and for named rows the class's fields, for dicts the key order."""
    out = []
    for row in rows:
        if kind == "dict":
            out.append(("dict", list(row.items())))
        elif kind == "named":
            out.append(("named", tuple(type(row)._fields), tuple(row)))
        else:
            assert type(row) is tuple
            out.append(("tuple", row))
    return out


def driver_outcome(kind, make, protocol_version):
    """What the driver makes of ``make()``'s ``(body, result_metadata)``: ``("rows", ...)`` or ``("error", exc)``."""
    body, meta = make()
    try:
        msg = decode(ProtocolHandler, body, protocol_version, meta)
        if msg.kind != ROWS:
            return ("kind", msg.kind)
        rows = FACTORY[kind](msg.column_names, msg.parsed_rows)
        return ("rows", _rows_view(kind, rows), _message_view(msg))
    except Exception as exc:  # noqa: BLE001 - the driver's answer, whatever it is
        return ("error", exc)


def fast_outcome(kind, make, protocol_version):
    body, meta = make()
    try:
        msg = decode(decoding.handler(kind), body, protocol_version, meta)
        if msg.kind != ROWS:
            return ("kind", msg.kind)
        return ("rows", _rows_view(kind, msg.parsed_rows), _message_view(msg))
    except Exception as exc:  # noqa: BLE001 - checked by the caller
        return ("error", exc)


def assert_same_outcome(kind, make, protocol_version, times=2):
    """The fast path answers as the driver: the same rows, or an error when the driver's is one (a
    DriverException; the driver's own type when it raises a DriverException itself). ``times``: decodes
    in a row (the later ones run on a cached plan)."""
    expected = driver_outcome(kind, make, protocol_version)
    for _ in range(times):
        got = fast_outcome(kind, make, protocol_version)
        if expected[0] == "error":
            assert got[0] == "error", f"the fast path decoded {got!r} where the driver raised {expected[1]!r}"
            assert isinstance(got[1], DriverException), f"{got[1]!r} (the driver: {expected[1]!r})"
            if isinstance(expected[1], DriverException) and not isinstance(got[1], MalformedResult):
                assert type(got[1]) is type(expected[1])
        else:
            assert got[0] != "error", f"the fast path raised {got[1]!r} where the driver gave {expected!r}"
            assert got == expected
    return expected
