# cython: language_level=3
"""``PreparedStatement.bind`` compiled: the driver's ``BoundStatement`` for less work.

Behaviour is that of the pure-Python specification ``pyfactories.binding._binding_py`` (which also makes
the per-statement plans, once per prepared statement): the values of the common types are
serialized here, every other value by the column type's own ``serialize``, and whole binds the
plan does not cover by the driver's ``BoundStatement.bind``.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.datetime cimport (datetime_day, datetime_hour, datetime_microsecond, datetime_minute,
                               datetime_month, datetime_second, datetime_tzinfo, datetime_year, import_datetime)
from cpython.exc cimport PyErr_Clear
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.object cimport PyTypeObject
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_AsSsize_t
from cpython.unicode cimport PyUnicode_AsUTF8String
from libc.string cimport memcpy

import datetime as _datetime
import uuid as _uuid

from cassandra.query import UNSET_VALUE, BoundStatement

from pyfactories.binding import _binding_py as spec

cdef extern from "Python.h":
    PyTypeObject PyList_Type
    PyTypeObject PyTuple_Type
    int PyFloat_Pack8(double x, char *p, int le)
    int PyFloat_Pack4(double x, char *p, int le)
    bint PyUnicode_IS_ASCII(object o)

import_datetime()

cdef object _UNSET = UNSET_VALUE
cdef object _BOUND = BoundStatement
cdef object _NEW_BOUND = BoundStatement.__new__
cdef object _DATETIME = _datetime.datetime
cdef object _UUID = _uuid.UUID
cdef object _UUID_LIMIT = 1 << 128
cdef str _PLAN = spec.PLAN_ATTRIBUTE + "_compiled"  # the specification's plans are its own
cdef tuple _SERIAL = spec.SERIAL
cdef bint _INTEGER_MILLIS = spec.TIMESTAMP_ROUNDING == "integer"
cdef enum:
    DELEGATE, INT32, INT64, INT16, INT8, BOOLEAN, DOUBLE, FLOAT, UTF8, ASCII, BLOB, TIMESTAMP, UUID
assert (DELEGATE, INT32, INT64, INT16, INT8, BOOLEAN, DOUBLE, FLOAT, UTF8, ASCII, BLOB, TIMESTAMP, UUID) == (
    spec.DELEGATE, spec.INT32, spec.INT64, spec.INT16, spec.INT8, spec.BOOLEAN, spec.DOUBLE, spec.FLOAT,
    spec.UTF8, spec.ASCII, spec.BLOB, spec.TIMESTAMP, spec.UUID)


cdef class BindPlan:
    """What ``bind`` needs of a prepared statement (``_binding_py.plan_fields``), and what it was made for.

    Made once: its fields are what ``bind`` reads in C, so they never change under a bind."""
    cdef readonly object meta, routing_key_indexes, protocol_version, encryption
    cdef readonly bint covered, sets_table
    cdef readonly bytes kinds
    cdef readonly tuple types, names, routing_indexes, columns
    cdef readonly bytes routing_flags
    cdef readonly frozenset index_set
    cdef bint made

    def __init__(self, prepared, key=None):
        if self.made:
            raise TypeError("a BindPlan is made once")
        self.made = True
        if key is None:
            key = spec.plan_key(prepared)
        (self.meta, self.routing_key_indexes, self.protocol_version, self.encryption) = key
        covered, sets_table, kinds, types, names, flags, indexes, columns = spec.plan_fields(prepared, key)
        cdef Py_ssize_t count = len(columns)
        if not (len(kinds) == len(types) == len(names) == len(flags) == count):
            raise ValueError("a bind plan's fields are of different lengths")
        self.types, self.names, self.routing_indexes, self.columns = types, names, indexes, columns
        self.index_set = frozenset(indexes)
        self.kinds = bytes(kinds)
        self.routing_flags = bytes(flags)
        self.covered, self.sets_table = covered, sets_table


cdef inline bint _same_items(object live, tuple copy):
    """``live`` is a list or tuple of the very objects of ``copy`` (``_binding_py._same_items``)."""
    cdef Py_ssize_t i, count = PyTuple_GET_SIZE(copy)
    if type(live) is list:
        if PyList_GET_SIZE(live) != count:
            return False
        for i in range(count):
            if PyList_GET_ITEM(live, i) != PyTuple_GET_ITEM(copy, i):
                return False
        return True
    if type(live) is tuple:
        if PyTuple_GET_SIZE(live) != count:
            return False
        for i in range(count):
            if PyTuple_GET_ITEM(live, i) != PyTuple_GET_ITEM(copy, i):
                return False
        return True
    return False


cdef inline BindPlan _plan_of(prepared, dict attributes):
    """``_binding_py.plan_of``: the statement's plan, made again when what it was made for changed."""
    found = attributes.get(_PLAN)
    # a plan made by __new__ alone (its fields None) is no plan
    cdef BindPlan plan = found if type(found) is BindPlan and (<BindPlan>found).made else None
    meta = prepared.column_metadata
    indexes = prepared.routing_key_indexes
    protocol_version = prepared.protocol_version
    encryption = prepared.column_encryption_policy
    if (plan is None or plan.meta is not meta or plan.routing_key_indexes is not indexes
            or plan.protocol_version is not protocol_version or plan.encryption is not encryption
            or (plan.covered and not (_same_items(meta, plan.columns)
                                      and (indexes is None or _same_items(indexes, plan.routing_indexes))))):
        plan = BindPlan(prepared, (meta, indexes, protocol_version, encryption))
        attributes[_PLAN] = plan
    return plan


cdef inline bytes _pack_integer(long long number, int size):
    cdef bytes data = PyBytes_FromStringAndSize(NULL, size)
    cdef unsigned char *out = <unsigned char *>PyBytes_AS_STRING(data)
    cdef unsigned long long bits = <unsigned long long>number
    cdef int i
    for i in range(size - 1, -1, -1):
        out[i] = bits & 0xFF
        bits >>= 8
    return data


cdef inline long long _days_from_civil(long long year, long long month, long long day):
    """Days since 1970-01-01 of a proleptic Gregorian date (years 1 to 9999), as ``calendar.timegm`` counts."""
    year -= month <= 2
    cdef long long era = year // 400
    cdef long long year_of_era = year - era * 400
    cdef long long day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    cdef long long day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


cdef inline object _timestamp(object value):
    """``_binding_py.timestamp_millis`` packed, for a naive ``datetime``."""
    cdef long long seconds = (_days_from_civil(datetime_year(value), datetime_month(value), datetime_day(value)) * 86400
                              + datetime_hour(value) * 3600 + datetime_minute(value) * 60 + datetime_second(value))
    if _INTEGER_MILLIS:
        return _pack_integer(seconds * 1000 + datetime_microsecond(value) // 1000, 8)
    cdef double millis = <double>seconds * 1e3 + <double>datetime_microsecond(value) / 1e3
    return _pack_integer(<long long>millis, 8)


cdef object _serialize_fast(int kind, object value):
    """``_binding_py.serialize_fast``: the driver's bytes, or None for the driver's ``serialize``."""
    cdef type cls = type(value)
    cdef long long number
    cdef int overflow, size
    cdef bytes data
    if kind == INT32 or kind == INT64 or kind == INT16 or kind == INT8:
        if cls is not int:
            return None
        number = PyLong_AsLongLongAndOverflow(value, &overflow)
        if overflow:
            return None
        size = 4 if kind == INT32 else 8 if kind == INT64 else 2 if kind == INT16 else 1
        if size < 8 and not (-(1LL << (size * 8 - 1)) <= number < (1LL << (size * 8 - 1))):
            return None
        return _pack_integer(number, size)
    if kind == BOOLEAN:
        if cls is bool:
            return b"\x01" if value is True else b"\x00"
    elif kind == DOUBLE or kind == FLOAT:
        if cls is float:
            size = 8 if kind == DOUBLE else 4
            data = PyBytes_FromStringAndSize(NULL, size)
            if (PyFloat_Pack8(PyFloat_AS_DOUBLE(value), PyBytes_AS_STRING(data), 0) if size == 8 else
                    PyFloat_Pack4(PyFloat_AS_DOUBLE(value), PyBytes_AS_STRING(data), 0)) < 0:
                PyErr_Clear()  # out of range for a float: the driver's serialize raises its error
                return None
            return data
    elif kind == UTF8:
        if cls is str:
            try:
                return PyUnicode_AsUTF8String(value)
            except UnicodeEncodeError:
                return None
    elif kind == ASCII:
        if cls is str and PyUnicode_IS_ASCII(value):
            return PyUnicode_AsUTF8String(value)
    elif kind == BLOB:
        if cls is bytes:
            return value
    elif kind == TIMESTAMP:
        if cls is _DATETIME and datetime_tzinfo(value) is None:
            return _timestamp(value)
    elif kind == UUID:
        if cls is _UUID:
            number_of = value.int  # a slot Python can set: the driver's serialize refuses what is not a UUID's
            if type(number_of) is int and 0 <= number_of < _UUID_LIMIT:
                return value.bytes
    return None


cdef object _routing_key(list values, tuple indexes, Py_ssize_t count):
    """``_binding_py.routing_key``: ``indexes`` are the plan's, ``int`` of its ``count`` columns; ``values`` the
    bind's own (a serialize reaching it through the garbage collector could have resized it: then the
    driver's own indexing says). Nothing here runs Python code between measuring and copying the parts."""
    cdef Py_ssize_t n = PyTuple_GET_SIZE(indexes), total = 0, size, i, index
    if n == 0:
        return None
    if PyList_GET_SIZE(values) != count:
        return spec.routing_key(values, indexes)
    if n == 1:
        return <object>PyList_GET_ITEM(values, PyLong_AsSsize_t(<object>PyTuple_GET_ITEM(indexes, 0)))
    for i in range(n):
        index = PyLong_AsSsize_t(<object>PyTuple_GET_ITEM(indexes, i))
        part = <object>PyList_GET_ITEM(values, index)
        if type(part) is not bytes or PyBytes_GET_SIZE(part) > 0xFFFF:
            return None
        total += PyBytes_GET_SIZE(part) + 3
    cdef bytes key = PyBytes_FromStringAndSize(NULL, total)
    cdef unsigned char *out = <unsigned char *>PyBytes_AS_STRING(key)
    for i in range(n):  # the same parts: nothing ran since they were measured
        part = <object>PyList_GET_ITEM(values, PyLong_AsSsize_t(<object>PyTuple_GET_ITEM(indexes, i)))
        size = PyBytes_GET_SIZE(part)
        out[0] = (size >> 8) & 0xFF
        out[1] = size & 0xFF
        memcpy(out + 2, PyBytes_AS_STRING(part), size)
        out[size + 2] = 0
        out += size + 3
    return key


cdef object _new_bound(prepared, meta, bint sets_table):
    """``_binding_py.new_bound``."""
    serial = prepared.serial_consistency_level
    if serial is not None and serial not in _SERIAL:
        return None
    bound = _NEW_BOUND(_BOUND)
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


cdef extern from *:
    """
    /* A list or tuple (base), or a subclass whose len, iteration and indexing are base's own slots. */
    static int pyfactories_sequence_like(PyObject *values, PyTypeObject *base) {
        PyTypeObject *cls = Py_TYPE(values);
        if (cls == base) return 1;
        if (!PyType_IsSubtype(cls, base)) return 0;
        return cls->tp_iter == base->tp_iter && cls->tp_as_sequence != NULL && cls->tp_as_mapping != NULL
            && cls->tp_as_sequence->sq_length == base->tp_as_sequence->sq_length
            && cls->tp_as_mapping->mp_subscript == base->tp_as_mapping->mp_subscript;
    }
    """
    bint _sequence_like "pyfactories_sequence_like"(object values, PyTypeObject *base)


cdef inline bint _list_like(object values):
    """A list, or a subclass whose ``len``, iteration and indexing are the list's: read as a list."""
    return _sequence_like(values, &PyList_Type)


cdef inline bint _tuple_like(object values):
    """A tuple, or a subclass (a namedtuple) whose ``len``, iteration and indexing are the tuple's."""
    return _sequence_like(values, &PyTuple_Type)


def bind(prepared, values):
    """``prepared.bind(values)`` as the driver does it (``pyfactories.binding._binding_py.bind``)."""
    cdef dict attributes = prepared.__dict__
    cdef BindPlan plan = _plan_of(prepared, attributes)
    # the plan's fields, held here: nothing a value's serialize does can free what C reads
    cdef bytes kinds_held = plan.kinds, routing_held = plan.routing_flags
    cdef tuple types = plan.types, names = plan.names
    cdef Py_ssize_t i, given, count = PyBytes_GET_SIZE(kinds_held)
    cdef const unsigned char *kinds = <const unsigned char *>PyBytes_AS_STRING(kinds_held)
    cdef const unsigned char *routing = <const unsigned char *>PyBytes_AS_STRING(routing_held)
    cdef bint is_list
    cdef int own_set = -1  # the statement's routing index set is the plan's: unknown (-1), no, yes
    protocol_version = plan.protocol_version
    if values is None:
        values = ()
    bound = _new_bound(prepared, plan.columns, plan.sets_table) if plan.covered else None
    if bound is None:
        return _BOUND(prepared).bind(values)
    if type(values) is dict:
        values = [(<dict>values).get(name, _UNSET) for name in names]
        is_list = True
    elif _list_like(values):
        is_list = True
    elif _tuple_like(values):
        is_list = False
    else:
        return _BOUND(prepared).bind(values)
    given = PyList_GET_SIZE(values) if is_list else PyTuple_GET_SIZE(values)
    if given > count:
        raise spec.too_many(given, count)
    cdef list serialized = [None] * count  # filled in place (never a NULL slot: the collector can see it)
    for i in range(count):
        # the list as it is now (a serialize may have changed it), as the driver's zip reads it
        if is_list:
            value = <object>PyList_GET_ITEM(values, i) if i < PyList_GET_SIZE(values) else _UNSET
        else:
            value = <object>PyTuple_GET_ITEM(values, i) if i < given else _UNSET
        if value is None or value is _UNSET:
            if value is _UNSET:
                # the driver's is_routing_key_index: the set it keeps, made at the first unset value (looked
                # up again only after Python code ran)
                if own_set < 0:
                    index_set = attributes.get("_routing_key_index_set")
                    if index_set is None:
                        attributes["_routing_key_index_set"] = index_set = plan.index_set
                    own_set = index_set is plan.index_set
                if routing[i] if own_set else prepared.is_routing_key_index(i):
                    raise spec.unset_in_routing_key_error(names[i])
            data = value
        else:
            data = _serialize_fast(kinds[i], value)
            if data is None:
                data = spec.serialize_column(types[i], names[i], value, protocol_version)
                own_set = -1
            elif kinds[i] == UUID:
                own_set = -1  # (a UUID's bytes are a Python property)
        serialized[i] = data
    bound.raw_values = values
    bound.values = serialized
    bound._routing_key = _routing_key(serialized, plan.routing_indexes, count)
    return bound
