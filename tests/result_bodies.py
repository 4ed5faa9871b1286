"""Build native-protocol RESULT (ROWS) bodies by hand, for decoder tests that need no server.

Types are the driver's own ``cqltypes`` classes, and values are serialized by
them, so a body here is what a server would send for those columns.
"""

import struct
from datetime import date, datetime, time
from decimal import Decimal
from uuid import UUID

from cassandra import cqltypes
from cassandra.protocol import ResultMessage
from cassandra.util import Date, Duration, Time

ROWS = 2
GLOBAL_TABLES_SPEC, HAS_MORE_PAGES, NO_METADATA, METADATA_ID = 0x1, 0x2, 0x4, 0x8
_CODES = {cls: code for code, cls in ResultMessage.type_codes.items() if code != 0}


def string(value: str) -> bytes:
    raw = value.encode()
    return struct.pack(">H", len(raw)) + raw


def type_spec(t) -> bytes:
    """The [option] bytes of a type."""
    for generic, code in ((cqltypes.ListType, 0x20), (cqltypes.SetType, 0x22)):
        if issubclass(t, generic):
            return struct.pack(">H", code) + type_spec(t.subtypes[0])
    if issubclass(t, cqltypes.MapType):
        return struct.pack(">H", 0x21) + type_spec(t.subtypes[0]) + type_spec(t.subtypes[1])
    if issubclass(t, cqltypes.UserType):
        fields = b"".join(string(name) + type_spec(sub) for name, sub in zip(t.fieldnames, t.subtypes))
        return struct.pack(">H", 0x30) + string(t.keyspace) + string(t.typename) + struct.pack(">H", len(t.subtypes)) + fields
    if issubclass(t, cqltypes.TupleType):
        return struct.pack(">H", 0x31) + struct.pack(">H", len(t.subtypes)) + b"".join(type_spec(s) for s in t.subtypes)
    if issubclass(t, cqltypes.VectorType):
        name = f"{cqltypes.VectorType.cassname}({t.subtype.cassname}, {t.vector_size})"
        return struct.pack(">H", 0) + string("org.apache.cassandra.db.marshal." + name)
    return struct.pack(">H", _CODES[t])


EMPTY_VALUE = object()  # a zero-length value: what CQL calls an empty value


def value(t, v, protocol_version) -> bytes:
    if v is None:
        return struct.pack(">i", -1)
    if v is EMPTY_VALUE:
        return struct.pack(">i", 0)
    raw = t.to_binary(v, protocol_version)
    return struct.pack(">i", len(raw)) + raw


def rows_body(columns, rows, protocol_version=5, *, paging_state=None, metadata=True, keyspace="ks", table="t"):
    """``columns``: [(name, cqltype)]; ``rows``: lists of Python values (None for NULL)."""
    flags = GLOBAL_TABLES_SPEC if metadata else NO_METADATA
    parts = [struct.pack(">i", ROWS)]
    if paging_state is not None:
        flags |= HAS_MORE_PAGES
    parts.append(struct.pack(">ii", flags, len(columns)))
    if paging_state is not None:
        parts.append(struct.pack(">i", len(paging_state)) + paging_state)
    if metadata:
        parts.append(string(keyspace) + string(table))
        parts.extend(string(name) + type_spec(t) for name, t in columns)
    parts.append(struct.pack(">i", len(rows)))
    for row in rows:
        parts.extend(value(t, v, protocol_version) for (_, t), v in zip(columns, row))
    return b"".join(parts)


def result_metadata(columns, keyspace="ks", table="t"):
    """What a prepared statement holds as ``result_metadata`` for these columns."""
    return [(keyspace, table, name, t) for name, t in columns]


def param(base, *subtypes):
    return base.apply_parameters(list(subtypes))


UDT = cqltypes.UserType.make_udt_class("ks", "address", ("street", "zip"), (cqltypes.UTF8Type, cqltypes.Int32Type))

# (cqltype, a few values the driver round-trips), covering every CQL type.
SAMPLES = [
    (cqltypes.AsciiType, ["", "abc"]),
    (cqltypes.LongType, [0, -(2**63), 2**63 - 1]),
    (cqltypes.BytesType, [b"", b"\x00\xff"]),
    (cqltypes.BooleanType, [True, False]),
    (cqltypes.SimpleDateType, [Date(date(2024, 2, 29)), Date(0)]),
    (cqltypes.DecimalType, [Decimal("1.50"), Decimal("-1E+30")]),
    (cqltypes.DoubleType, [1.5, -0.0]),
    (cqltypes.DurationType, [Duration(1, 2, 3)]),
    (cqltypes.FloatType, [1.5, 0.25]),
    (cqltypes.InetAddressType, ["127.0.0.1", "::1"]),
    (cqltypes.Int32Type, [0, -(2**31), 2**31 - 1]),
    (cqltypes.ShortType, [-3, 32767]),
    (cqltypes.UTF8Type, ["", "héllo ☃"]),
    (cqltypes.TimeType, [Time(time(12, 30, 1))]),
    (cqltypes.DateType, [datetime(2020, 1, 2, 3, 4, 5)]),
    (cqltypes.TimeUUIDType, [UUID("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")]),
    (cqltypes.ByteType, [-128, 127]),
    (cqltypes.UUIDType, [UUID(int=7)]),
    (cqltypes.IntegerType, [0, 10**40, -(10**40)]),
    (param(cqltypes.ListType, cqltypes.Int32Type), [[1, 2, 3], []]),
    (param(cqltypes.SetType, cqltypes.UTF8Type), [{"a", "b"}]),
    (param(cqltypes.MapType, cqltypes.UTF8Type, cqltypes.Int32Type), [{"a": 1, "b": 2}]),
    (param(cqltypes.ListType, param(cqltypes.MapType, cqltypes.Int32Type, param(cqltypes.SetType, cqltypes.UTF8Type))), [[{1: {"x"}}]]),
    (param(cqltypes.TupleType, cqltypes.Int32Type, cqltypes.UTF8Type), [(1, "a"), (None, None)]),
    (UDT, [UDT.tuple_type("main st", 12345)]),
    (cqltypes.VectorType.apply_parameters([cqltypes.FloatType, 3], None), [[1.0, 2.5, -3.0]]),
]
