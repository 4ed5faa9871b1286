"""The specification of ``pyfactories.binding._binding``: ``PreparedStatement.bind``, the driver's result for less work.

``bind(prepared, values)`` returns the driver's own ``BoundStatement``, in the state the driver's
``prepared.bind(values)`` leaves it (the same attributes, ``values`` and ``raw_values``), with its
routing key already computed (the one the driver's ``routing_key`` property would compute from those
values, so reading it gives the same bytes).

What is faster: a *plan* per prepared statement (kept on the statement, rebuilt when its columns,
routing key or protocol version change) names each column's *kind*; a value of exactly the Python
type that kind expects (``int`` for int/bigint/smallint/tinyint/counter in range, ``bool``, ``float``,
``str``, ``bytes``, a naive ``datetime``, ``uuid.UUID``) is serialized here, to the bytes the driver's
``serialize`` gives it. Every other value (subclasses, out-of-range or wrong-type values, collections,
UDTs, decimals...) goes to the column type's own ``serialize``, with the driver's error wrapping, so
the bytes and the errors are always the driver's.

Whole binds the plan does not cover go to the driver's ``BoundStatement.bind``: protocol versions
before 4 (or one that is not an ``int``), a column encryption policy, a statement without column
metadata (or whose metadata is not a list or tuple of the driver's ``ColumnMetadata``, or whose routing
key indexes are not a list or tuple of ``int`` of its columns), values that are neither a ``dict`` nor a
list or tuple (or a subclass of one that indexes, iterates and counts as they do, such as a namedtuple),
and a driver whose ``BoundStatement`` starts with other attributes than the ones set here
(scylla-driver's also sets ``table``, which is set here too).

A plan keeps copies of the columns and routing key indexes it was made from, and is made again when the
statement's lists are other objects or hold other items (a list changed in place), so a plan never
serializes a value for a column the statement no longer has. Values are read as the driver's ``zip``
reads them: by position in the list as it is at that moment, so a column type's ``serialize`` that
shortens or lengthens the values list leaves the statement as the driver's ``bind`` leaves it.
"""

from __future__ import annotations

import calendar
import datetime
import struct
import uuid

from cassandra import ConsistencyLevel, cqltypes
from cassandra.protocol import ColumnMetadata
from cassandra.query import UNSET_VALUE, BoundStatement

#: Kinds of column: serialized by the driver's ``serialize`` (``DELEGATE``) or here.
DELEGATE, INT32, INT64, INT16, INT8, BOOLEAN, DOUBLE, FLOAT, UTF8, ASCII, BLOB, TIMESTAMP, UUID = range(13)
INTEGER_BITS = {INT32: 32, INT64: 64, INT16: 16, INT8: 8}
_KIND_OF_TYPE = {
    cqltypes.Int32Type: INT32, cqltypes.LongType: INT64, cqltypes.CounterColumnType: INT64,
    cqltypes.ShortType: INT16, cqltypes.ByteType: INT8, cqltypes.BooleanType: BOOLEAN,
    cqltypes.DoubleType: DOUBLE, cqltypes.FloatType: FLOAT, cqltypes.UTF8Type: UTF8,
    cqltypes.VarcharType: UTF8, cqltypes.AsciiType: ASCII, cqltypes.BytesType: BLOB,
    cqltypes.DateType: TIMESTAMP, cqltypes.UUIDType: UUID, cqltypes.TimeUUIDType: UUID,
}  # fmt: skip
SERIAL = (ConsistencyLevel.SERIAL, ConsistencyLevel.LOCAL_SERIAL)
PLAN_ATTRIBUTE = "_pyfactories_bind_plan"
#: The attributes ``BoundStatement(prepared)`` sets (with ``keyspace`` when the statement has columns).
INIT_ATTRIBUTES = frozenset({"prepared_statement", "retry_policy", "consistency_level", "_serial_consistency_level",
                             "fetch_size", "custom_payload", "is_idempotent", "values", "_routing_key"})
_TIMESTAMP_PROBES = (datetime.datetime(2024, 1, 2, 3, 4, 5, 678000), datetime.datetime(1, 1, 1),
                     datetime.datetime(9999, 12, 31, 23, 59, 59, 999999), datetime.datetime(1969, 12, 31, 23, 59, 59, 1),
                     datetime.datetime(2262, 4, 11, 23, 47, 16, 854775))


def timestamp_millis(value: datetime.datetime, rounding: str = "double") -> int:
    """Milliseconds since the epoch of a naive ``datetime``, rounded as the driver's ``DateType`` does:
    through a double (``"double"``, cassandra-driver) or in integers (``"integer"``, scylla-driver)."""
    seconds = calendar.timegm((value.year, value.month, value.day, value.hour, value.minute, value.second))
    if rounding == "integer":
        return seconds * 1000 + value.microsecond // 1000
    return int(seconds * 1e3 + value.microsecond / 1e3)


def _driver_timestamp_rounding() -> str | None:
    """How the installed driver rounds timestamps (``timestamp_millis``), None if neither way: then its
    ``serialize`` does them all."""
    for rounding in ("double", "integer"):
        if all(cqltypes.DateType.serialize(v, 4) == struct.pack(">q", timestamp_millis(v, rounding))
               for v in _TIMESTAMP_PROBES):
            return rounding
    return None


TIMESTAMP_ROUNDING = _driver_timestamp_rounding()


#: The same, by the classes' identities (the driver's classes live as long as it does).
_KIND_OF_TYPE_ID = {id(col_type): kind for col_type, kind in _KIND_OF_TYPE.items()}


def kind_of(col_type: type) -> int:
    """The kind of a column's type class: only the driver's own classes (never a subclass, nor a class whose
    metaclass says it equals one of them, nor anything unhashable) are served here, found by identity."""
    kind = _KIND_OF_TYPE_ID.get(id(col_type), DELEGATE)
    return DELEGATE if kind == TIMESTAMP and TIMESTAMP_ROUNDING is None else kind


def plan_key(prepared) -> tuple:
    """What a plan was made for: it is rebuilt when any of these is another object (or, for the lists,
    holds other items: ``plan_current``)."""
    return (prepared.column_metadata, prepared.routing_key_indexes, prepared.protocol_version,
            prepared.column_encryption_policy)


def _columns(meta) -> tuple | None:
    """The statement's columns as a tuple, when they are a list or tuple of the driver's ``ColumnMetadata``
    (immutable: the same object is the same column); None otherwise (the driver's ``bind`` binds them)."""
    if type(meta) is not list and type(meta) is not tuple:
        return None
    columns = tuple(meta)
    return columns if all(type(c) is ColumnMetadata for c in columns) else None


def _indexes(indexes, count: int) -> tuple | None:
    """The routing key indexes as a tuple of ``int`` of columns (empty for None or empty); None when they
    are anything else (the driver's ``bind`` binds them and its ``routing_key`` reads them)."""
    if indexes is None:
        return ()
    if type(indexes) is not list and type(indexes) is not tuple:
        return None
    found = tuple(indexes)
    return found if all(type(i) is int and 0 <= i < count for i in found) else None


def plan_fields(prepared, key: tuple | None = None) -> tuple:
    """``(covered, sets_table, kinds, types, names, routing_flags, routing_indexes, columns)`` of a prepared
    statement, from what ``plan_key`` read of it (``key``, read now when None).

    ``covered`` is False when whole binds of it go to the driver's ``bind`` (see the module's docstring);
    ``sets_table``: the driver's ``BoundStatement`` has the table's name; ``routing_flags[i]``: column i is
    part of the routing key; ``columns``: the copy of the column metadata everything else was read from."""
    meta, routing_key_indexes, protocol_version, encryption = plan_key(prepared) if key is None else key
    columns = _columns(meta)
    indexes = None if columns is None else _indexes(routing_key_indexes, len(columns))
    if columns is None or indexes is None:
        return False, False, (), (), (), (), (), ()
    template = set(vars(BoundStatement(prepared)))
    sets_table = bool(columns) and "table" in template
    expected = INIT_ATTRIBUTES | {"keyspace"} | ({"table"} if sets_table else set()) if columns else INIT_ATTRIBUTES
    covered = (type(protocol_version) is int and protocol_version >= 4 and encryption is None
               and template == expected)
    return (covered, sets_table, tuple(kind_of(c.type) for c in columns), tuple(c.type for c in columns),
            tuple(c.name for c in columns), tuple(i in indexes for i in range(len(columns))), indexes, columns)


def _same_items(live, copy: tuple) -> bool:
    """``live`` (a list or tuple) holds the very objects of ``copy``, in its order."""
    return (type(live) is list or type(live) is tuple) and len(live) == len(copy) and all(
        a is b for a, b in zip(live, copy))


def plan_current(plan, key: tuple) -> bool:
    """Whether ``plan`` was made for what ``key`` (``plan_key``) says the statement is now."""
    if any(a is not b for a, b in zip(plan.key, key)):
        return False
    return not plan.covered or (_same_items(key[0], plan.columns)
                                and (key[1] is None or _same_items(key[1], plan.routing_indexes)))


def positional(values) -> bool:
    """Whether ``values`` is bound by position here: a list or a tuple, or a subclass of one whose ``len``,
    iteration and indexing are the list's or tuple's (the driver counts with ``len`` and iterates). The
    methods are those the class's own dictionaries give (what ``len`` and ``iter`` call), not what a
    metaclass's attribute lookup says."""
    cls = type(values)
    if cls is list or cls is tuple:
        return True
    base = tuple if isinstance(values, tuple) else list if isinstance(values, list) else None
    return base is not None and all(_lookup(cls, name) is _lookup(base, name) for name in SEQUENCE_METHODS)


SEQUENCE_METHODS = ("__len__", "__iter__", "__getitem__")
_MRO = type.__dict__["__mro__"]
_DICT = type.__dict__["__dict__"]


def _lookup(cls: type, name: str):
    """``name`` as the interpreter finds it on the class for its own slots: in the dictionaries of its MRO."""
    for klass in _MRO.__get__(cls):
        found = _DICT.__get__(klass).get(name)
        if found is not None:
            return found
    return None


def new_bound(prepared, meta, sets_table: bool = False) -> BoundStatement:
    """A ``BoundStatement`` in the state the driver's ``BoundStatement(prepared)`` leaves it (``values``
    and ``raw_values`` are the caller's); None if its serial consistency would be refused."""
    serial = prepared.serial_consistency_level
    if serial is not None and serial not in SERIAL:
        return None
    bound = BoundStatement.__new__(BoundStatement)
    bound.prepared_statement = prepared
    bound.retry_policy = prepared.retry_policy
    bound.consistency_level = prepared.consistency_level
    bound._serial_consistency_level = serial
    bound.fetch_size = prepared.fetch_size
    bound.custom_payload = prepared.custom_payload
    bound.is_idempotent = prepared.is_idempotent
    if meta:
        bound.keyspace = meta[0].keyspace_name
        if sets_table:
            bound.table = meta[0].table_name
    return bound


def serialize_fast(kind: int, value):
    """The driver's bytes for ``value`` in a column of ``kind``, or None when the driver's ``serialize``
    must do it (the value is not exactly of the type the kind expects, or out of its range)."""
    cls = type(value)
    if kind in INTEGER_BITS:
        half = 1 << (INTEGER_BITS[kind] - 1)
        if cls is int and -half <= value < half:
            return value.to_bytes(INTEGER_BITS[kind] // 8, "big", signed=True)
    elif kind == BOOLEAN:
        if cls is bool:
            return b"\x01" if value else b"\x00"
    elif kind == DOUBLE:
        if cls is float:
            return struct.pack(">d", value)
    elif kind == FLOAT:
        if cls is float:
            try:
                return struct.pack(">f", value)
            except OverflowError:
                return None
    elif kind == UTF8:
        if cls is str:
            try:
                return value.encode("utf-8")
            except UnicodeEncodeError:
                return None
    elif kind == ASCII:
        if cls is str and value.isascii():
            return value.encode("ascii")
    elif kind == BLOB:
        if cls is bytes:
            return value
    elif kind == TIMESTAMP:
        if cls is datetime.datetime and value.tzinfo is None:
            return struct.pack(">q", timestamp_millis(value, TIMESTAMP_ROUNDING))
    elif kind == UUID:
        if cls is uuid.UUID and type(value.int) is int and 0 <= value.int < 1 << 128:
            return value.bytes
    return None


def serialize_column(col_type, name: str, value, protocol_version: int):
    """The driver's ``serialize`` of one value, its errors wrapped as ``BoundStatement.bind`` wraps them."""
    try:
        return col_type.serialize(value, protocol_version)
    except (TypeError, struct.error) as exc:
        raise TypeError('Received an argument of invalid type for column "%s". Expected: %s, Got: %s; (%s)'
                        % (name, col_type, type(value), exc))


def unset_in_routing_key_error(name: str) -> ValueError:
    return ValueError("Cannot bind UNSET_VALUE as a part of the routing key '%s'" % name)


def too_many(got: int, expected: int) -> ValueError:
    return ValueError("Too many arguments provided to bind() (got %d, expected %d)" % (got, expected))


def routing_key(values: list, indexes: tuple):
    """The key the driver's ``BoundStatement.routing_key`` computes from ``values``; None where the driver
    would compute it later (no key, or a composite key with a part that is not bytes of up to 65535)."""
    if len(indexes) == 1:
        return values[indexes[0]]
    parts = [values[i] for i in indexes]
    if not indexes or not all(type(p) is bytes and len(p) <= 0xFFFF for p in parts):
        return None
    return b"".join(len(p).to_bytes(2, "big") + p + b"\x00" for p in parts)


def unset_in_routing_key(prepared, plan, index: int) -> bool:
    """Whether an unset value at ``index`` is refused, as the driver's ``is_routing_key_index`` says: from
    the set of routing key indexes the statement keeps, made at its first unset value and never made again.
    Made here, it is the plan's ``index_set`` (a frozenset: nothing changes it in place), and the plan's
    ``routing_flags`` say the same; one made by the driver (or left by an older plan) is asked."""
    index_set = prepared.__dict__.get("_routing_key_index_set")
    if index_set is None:
        prepared.__dict__["_routing_key_index_set"] = index_set = plan.index_set
    return plan.routing_flags[index] if index_set is plan.index_set else prepared.is_routing_key_index(index)


class BindPlan:
    __slots__ = ("key", "covered", "sets_table", "kinds", "types", "names", "routing_flags", "routing_indexes",
                 "columns", "index_set")

    def __init__(self, prepared, key: tuple | None = None) -> None:
        self.key = plan_key(prepared) if key is None else key
        (self.covered, self.sets_table, self.kinds, self.types, self.names, self.routing_flags,
         self.routing_indexes, self.columns) = plan_fields(prepared, self.key)
        self.index_set = frozenset(self.routing_indexes)


def plan_of(prepared) -> BindPlan:
    """The prepared statement's plan, made on its first bind and when what it was made for changed."""
    plan = prepared.__dict__.get(PLAN_ATTRIBUTE)
    key = plan_key(prepared)
    if type(plan) is not BindPlan or not plan_current(plan, key):
        plan = BindPlan(prepared, key)
        prepared.__dict__[PLAN_ATTRIBUTE] = plan
    return plan


def bind(prepared, values) -> BoundStatement:
    """``prepared.bind(values)`` as the driver does it: see the module's docstring."""
    plan = plan_of(prepared)
    if values is None:
        values = ()
    bound = new_bound(prepared, plan.columns, plan.sets_table) if plan.covered else None
    if bound is None or not (type(values) is dict or positional(values)):
        return BoundStatement(prepared).bind(values)
    if type(values) is dict:
        values = [values.get(name, UNSET_VALUE) for name in plan.names]
    count = len(plan.kinds)
    if len(values) > count:
        raise too_many(len(values), count)
    serialized: list = []
    for i in range(count):
        value = values[i] if i < len(values) else UNSET_VALUE  # the list as it is now, as the driver's zip reads it
        if value is None:
            serialized.append(None)
        elif value is UNSET_VALUE:
            if unset_in_routing_key(prepared, plan, i):
                raise unset_in_routing_key_error(plan.names[i])
            serialized.append(UNSET_VALUE)
        else:
            data = serialize_fast(plan.kinds[i], value)
            if data is None:
                data = serialize_column(plan.types[i], plan.names[i], value, plan.key[2])
            serialized.append(data)
    bound.raw_values = values
    bound.values = serialized
    bound._routing_key = routing_key(serialized, plan.routing_indexes)
    return bound
