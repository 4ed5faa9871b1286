# cython: language_level=3
"""Decode RESULT rows straight into named (or dict) rows, with cached decode state.

The driver's compiled path, for every ROWS message, parses the column
metadata into Python objects, builds a descriptor and a deserializer per
column, decodes each row into a tuple, and then hands the tuples to the row
factory, which builds every row a second time. Here:

* the column metadata is skipped over in C and its raw bytes (or, for a
  prepared statement's result without metadata, the identity of the prepared
  metadata) key a bounded cache of *plans*: column names and types, the
  driver's own deserializers, the row class or dict template;
* a miss lets the driver's own metadata parser build the plan, so types are
  exactly the driver's;
* each row is decoded into a scratch array and moved into its final object,
  one allocation per row, never visible half-filled.

Values are decoded by the driver's deserializers (``cimport`` of the ``.pxd``
files the driver ships), so they are the driver's values. This module is
imported only when the installed driver is the one it was built against
(``pyfactories.fastpath`` checks first).
"""

from libc.string cimport memcpy
from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t, uint64_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.unicode cimport PyUnicode_DecodeASCII, PyUnicode_DecodeUTF8
from cpython.datetime cimport datetime_new, import_datetime
from libc.math cimport fabs, modf, round

from cassandra.buffer cimport Buffer
from cassandra.deserializers cimport Deserializer, from_binary

import io

include "_driver_version.pxi"

import uuid

from cassandra import DriverException
from cassandra.cqltypes import TimeUUIDType, UserType, UUIDType
from cassandra.deserializers import (DesAsciiType, DesDateType, DesUTF8Type, DesUUIDType, DesVarcharType,
                                     make_deserializers)
from cassandra.query import tuple_factory as _tuple_factory

from pyfactories._rowclass import make_row_class

cdef extern from *:
    """
    /* uuid.UUID(bytes=p[:16]) without running UUID.__init__: the same two slots, set the same way. */
    static PyObject *pf_uuid_from_16(PyObject *uuid_type, PyObject *int_name, PyObject *is_safe_name,
                                     PyObject *is_safe, const char *p) {
        PyObject *value, *u = ((PyTypeObject *)uuid_type)->tp_alloc((PyTypeObject *)uuid_type, 0);
        if (u == NULL) return NULL;
        value = _PyLong_FromByteArray((const unsigned char *)p, 16, 0, 0);
        if (value == NULL || PyObject_GenericSetAttr(u, int_name, value) < 0
                || PyObject_GenericSetAttr(u, is_safe_name, is_safe) < 0) {
            Py_XDECREF(value);
            Py_DECREF(u);
            return NULL;
        }
        Py_DECREF(value);
        return u;
    }
    """
    object pf_uuid_from_16(object uuid_type, object int_name, object is_safe_name, object is_safe, const char *p)

cdef extern from *:
    """
    /* The driver's timestamp (DesDateType): datetime(1970, 1, 1) + timedelta(days, seconds, us), where
       the three come from the milliseconds through a double, rounding as the driver does. Here the
       same three numbers, then the date by exact integer arithmetic. Returns 0 and the fields when
       the result lies in years 1..9999; -1 (the caller uses the driver's deserializer) otherwise. */
    static int pf_timestamp_fields(int64_t ms, int *ymd_hms_us) {
        double timestamp, tmp, micros_left;
        int days, seconds, microseconds, x_odd;
        int64_t total_us, day, us_of_day, z, era, doe, yoe, y, doy, mp;
        /* ms of 0001-01-01 .. 9999-12-31 23:59:59.999, with a day's margin both ways for the rounding */
        if (ms < -62135596800000LL + 86400000LL || ms > 253402300799999LL - 86400000LL) return -1;
        timestamp = (double)ms / 1000.0;
        days = (int)(timestamp / 86400);
        seconds = (int)(timestamp - (double)((int64_t)days * 86400));
        micros_left = modf(timestamp, &tmp) * 1000000.;
        micros_left = modf(micros_left, &tmp);
        microseconds = (int)tmp;
        tmp = round(micros_left);
        if (fabs(tmp - micros_left) == 0.5) {
            x_odd = microseconds & 1;
            tmp = 2.0 * round((micros_left + x_odd) * 0.5) - x_odd;
        }
        microseconds += (int)tmp;
        total_us = ((int64_t)days * 86400 + seconds) * 1000000 + microseconds;
        day = total_us / 86400000000LL;
        us_of_day = total_us % 86400000000LL;
        if (us_of_day < 0) { us_of_day += 86400000000LL; day -= 1; }
        /* civil date of a day count from 1970-01-01 (proleptic Gregorian) */
        z = day + 719468;
        era = (z >= 0 ? z : z - 146096) / 146097;
        doe = z - era * 146097;
        yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        y = yoe + era * 400;
        doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        mp = (5 * doy + 2) / 153;
        ymd_hms_us[2] = (int)(doy - (153 * mp + 2) / 5 + 1);
        ymd_hms_us[1] = (int)(mp < 10 ? mp + 3 : mp - 9);
        ymd_hms_us[0] = (int)(y + (ymd_hms_us[1] <= 2));
        if (ymd_hms_us[0] < 1 || ymd_hms_us[0] > 9999) return -1;
        ymd_hms_us[3] = (int)(us_of_day / 3600000000LL);
        ymd_hms_us[4] = (int)(us_of_day / 60000000LL % 60);
        ymd_hms_us[5] = (int)(us_of_day / 1000000LL % 60);
        ymd_hms_us[6] = (int)(us_of_day % 1000000LL);
        return 0;
    }
    """
    int pf_timestamp_fields(int64_t ms, int *ymd_hms_us)

cdef extern from "rows.h":
    int pf_import_rows() except -1
    int pf_adopt_row_class(object cls) except -1
    object pf_tuple_row_from_owned(object cls, PyObject **items, Py_ssize_t n)
    object pf_dict_row_from_items(object template, tuple keys, PyObject **items, Py_ssize_t n)

pf_import_rows()  # rows are allocated from pyfactories._speedups' free list
import_datetime()

BUILT_AGAINST_DRIVER = DRIVER_VERSION

cdef enum:
    # RESULT metadata flags (native protocol v4/v5)
    _GLOBAL_TABLES_SPEC = 0x0001
    _HAS_MORE_PAGES = 0x0002
    _NO_METADATA = 0x0004
    _METADATA_ID = 0x0008
    _CONTINUOUS_PAGING = 0x40000000
    _MAX_TYPE_DEPTH = 64
    _RESULT_KIND_ROWS = 0x0002

ROWS_NAMED = 0
ROWS_DICT = 1

PLAN_CACHE_SIZE = 256


class MalformedResult(DriverException):
    """A RESULT message body that does not hold what its header says."""


cdef struct Reader:
    const char *buf
    Py_ssize_t pos
    Py_ssize_t size


cdef const char *take(Reader *r, Py_ssize_t n) except NULL:
    cdef const char *p
    if n < 0 or n > r.size - r.pos:
        raise MalformedResult(f"RESULT body truncated: {n} bytes wanted at offset {r.pos} of {r.size}")
    p = r.buf + r.pos
    r.pos += n
    return p


cdef int32_t read_int(Reader *r) except? -1:
    cdef const unsigned char *p = <const unsigned char *>take(r, 4)
    return <int32_t>((<uint32_t>p[0] << 24) | (<uint32_t>p[1] << 16) | (<uint32_t>p[2] << 8) | p[3])


cdef int read_short(Reader *r) except -1:
    cdef const unsigned char *p = <const unsigned char *>take(r, 2)
    return (p[0] << 8) | p[1]


cdef int skip_string(Reader *r) except -1:
    take(r, read_short(r))
    return 0


cdef int skip_type(Reader *r, int depth) except -1:
    """Step over one [option] type spec; the driver parses it for real on a cache miss."""
    cdef int code, i, n
    if depth > _MAX_TYPE_DEPTH:
        raise MalformedResult("RESULT metadata nests types too deeply")
    code = read_short(r)
    if code == 0x0000:  # custom: class name
        skip_string(r)
    elif code == 0x0020 or code == 0x0022:  # list, set
        skip_type(r, depth + 1)
    elif code == 0x0021:  # map
        skip_type(r, depth + 1)
        skip_type(r, depth + 1)
    elif code == 0x0030:  # user-defined type
        skip_string(r)
        skip_string(r)
        n = read_short(r)
        for i in range(n):
            skip_string(r)
            skip_type(r, depth + 1)
    elif code == 0x0031:  # tuple
        n = read_short(r)
        for i in range(n):
            skip_type(r, depth + 1)
    return 0


cdef class Plan:
    """What decoding rows of one column list needs, built once per metadata."""
    cdef readonly list column_metadata, names, types
    cdef tuple deserializers, keys
    cdef bytes direct  # per column: how a non-empty value is built without the deserializer (_DIRECT_*)
    cdef object row_class, template, udts, source
    cdef Py_ssize_t ncols
    cdef int protocol_version

    def __init__(self, column_metadata, int rows_kind, int protocol_version, source=None):
        if not column_metadata:
            raise ValueError("a plan needs at least one column")
        self.column_metadata = list(column_metadata)
        self.names = [md[2] for md in column_metadata]
        self.types = [md[3] for md in column_metadata]
        self.ncols = len(column_metadata)
        self.deserializers = tuple(make_deserializers(self.types))
        self.direct = bytes([_direct_kind(t, d) for t, d in zip(self.types, self.deserializers)])
        self.protocol_version = protocol_version
        self.source = source
        self.udts = tuple(_user_types(self.types))
        self.keys = tuple(self.names)
        if rows_kind == ROWS_NAMED:
            self.row_class = make_row_class(self.keys)
            pf_adopt_row_class(self.row_class)
        else:
            self.template = dict.fromkeys(self.keys)

    cdef void map_user_types(self, user_type_map) except *:
        """Point each UDT at the class registered for it now, as the driver's metadata parse does.

        The UDT type objects are shared by every cluster in the process, and the
        driver sets their ``mapped_class`` on each parse; a cached plan skips the
        parse, so it repeats that step.
        """
        for udt in self.udts:
            udt.mapped_class = user_type_map.get(udt.keyspace, {}).get(udt.typename)


# Some of the driver's deserializers are a single CPython call on a copy of the value's bytes;
# for non-empty values of those columns (and only while the deserializer is the driver's own
# class) the decoder makes that call on the bytes in place, with the same result and the same
# exception. uuid and timeuuid: UUID(bytes=value) for 16-byte values (any other length still
# goes to the driver's deserializer, for its error); text: value.decode('utf8'); ascii:
# value.decode('ascii'); timestamp: the driver's arithmetic (pf_timestamp_fields) for 8-byte values
# in years 1..9999, the driver's deserializer for the rest.
cdef enum:
    _DIRECT_NONE = 0
    _DIRECT_UUID = 1
    _DIRECT_UTF8 = 2
    _DIRECT_ASCII = 3
    _DIRECT_TIMESTAMP = 4

_UUID = uuid.UUID
_UUID_INT = "int"
_UUID_IS_SAFE = "is_safe"
_SAFE_UNKNOWN = uuid.SafeUUID.unknown
_TIMEUUID_DESERIALIZE = TimeUUIDType.deserialize


def _direct_kind(cqltype, deserializer):
    des = type(deserializer)
    if cqltype is UUIDType and des is DesUUIDType:
        return _DIRECT_UUID
    if cqltype is TimeUUIDType and TimeUUIDType.deserialize is _TIMEUUID_DESERIALIZE:
        return _DIRECT_UUID
    if des is DesUTF8Type or des is DesVarcharType:
        return _DIRECT_UTF8
    if des is DesAsciiType:
        return _DIRECT_ASCII
    if des is DesDateType:
        return _DIRECT_TIMESTAMP
    return _DIRECT_NONE


def _user_types(types):
    for t in types:
        if isinstance(t, type) and issubclass(t, UserType) and t.typename is not None:
            yield t
        yield from _user_types(getattr(t, "subtypes", None) or ())


cdef class RowsDecoder:
    """``recv_results_rows`` for one kind of row, with its plan caches."""
    cdef int rows_kind
    cdef dict by_metadata  # raw metadata bytes -> Plan
    cdef dict by_prepared  # id(prepared result metadata) -> Plan
    cdef object fallback  # the driver's own recv_results_rows
    cdef object factory  # row factory applied after the driver's path
    cdef readonly Py_ssize_t hits, misses

    def __init__(self, int rows_kind, fallback, factory):
        self.rows_kind = rows_kind
        self.by_metadata = {}
        self.by_prepared = {}
        self.fallback = fallback
        self.factory = factory

    def clear(self):
        self.by_metadata.clear()
        self.by_prepared.clear()
        self.hits = self.misses = 0

    def __call__(self, msg, f, int protocol_version, user_type_map, result_metadata, column_encryption_policy):
        """``ResultMessage.recv_results_rows``: ``f`` is the body as a BytesIO, at the rows' metadata."""
        # getvalue() shares the frame's bytes object (no copy) while the BytesIO is unchanged.
        self.decode(msg, f.getvalue(), f.tell(), protocol_version, user_type_map, result_metadata,
                    column_encryption_policy)

    cdef decode(self, msg, bytes body, Py_ssize_t start, int protocol_version, user_type_map, result_metadata,
                column_encryption_policy):
        cdef Reader r
        r.buf = PyBytes_AS_STRING(body)
        r.size = PyBytes_GET_SIZE(body)
        r.pos = start
        cdef int32_t flags = read_int(&r)
        cdef int32_t colcount = read_int(&r)
        cdef int32_t n
        if column_encryption_policy is not None or flags & _CONTINUOUS_PAGING:
            return self._driver_path(msg, body, start, protocol_version, user_type_map, result_metadata,
                                     column_encryption_policy)
        if flags & _HAS_MORE_PAGES:
            n = read_int(&r)
            msg.paging_state = None if n < 0 else <bytes>take(&r, n)[:n]
        cdef Plan plan
        if flags & _NO_METADATA:
            if not result_metadata:
                return self._driver_path(msg, body, start, protocol_version, user_type_map, result_metadata,
                                         column_encryption_policy)
            plan = self._prepared_plan(result_metadata, protocol_version)
        else:
            if flags & _METADATA_ID:
                n = read_short(&r)
                msg.result_metadata_id = <bytes>take(&r, n)[:n]
            plan = self._metadata_plan(msg, body, &r, start, flags, colcount, protocol_version,
                                       user_type_map, result_metadata)
        msg.column_names = list(plan.names)
        msg.column_types = list(plan.types)
        msg.parsed_rows = self._rows(plan, &r, protocol_version)

    cdef Plan _prepared_plan(self, result_metadata, int protocol_version):
        cdef Plan plan = self.by_prepared.get(id(result_metadata))
        if plan is not None and plan.source is result_metadata and plan.protocol_version == protocol_version:
            self.hits += 1
            return plan
        self.misses += 1
        plan = Plan(result_metadata, self.rows_kind, protocol_version, source=result_metadata)
        _remember(self.by_prepared, id(result_metadata), plan)
        return plan

    cdef Plan _metadata_plan(self, msg, bytes body, Reader *r, Py_ssize_t start, int32_t flags, int32_t colcount,
                             int protocol_version, user_type_map, result_metadata):
        cdef Py_ssize_t i, spec_start = r.pos
        if colcount < 0:
            raise MalformedResult(f"RESULT metadata has a negative column count ({colcount})")
        if flags & _GLOBAL_TABLES_SPEC:
            skip_string(r)
            skip_string(r)
        for i in range(colcount):
            if not flags & _GLOBAL_TABLES_SPEC:
                skip_string(r)
                skip_string(r)
            skip_string(r)
            skip_type(r, 0)
        # The key: protocol version, table-spec flag, column count, then the specs' own bytes.
        cdef Py_ssize_t spec_len = r.pos - spec_start
        cdef bytes key = PyBytes_FromStringAndSize(NULL, spec_len + 6)
        cdef unsigned char *k = <unsigned char *>PyBytes_AS_STRING(key)
        k[0] = <unsigned char>protocol_version
        k[1] = flags & _GLOBAL_TABLES_SPEC
        memcpy(k + 2, &colcount, 4)
        memcpy(k + 6, r.buf + spec_start, spec_len)
        cdef Plan plan = self.by_metadata.get(key)
        if plan is not None:
            if plan.udts:
                plan.map_user_types(user_type_map)
            self.hits += 1
            msg.column_metadata = list(plan.column_metadata)
            return plan
        self.misses += 1
        # A miss: the driver's own parser reads the metadata (and sets its attributes on msg).
        f = io.BytesIO(body)
        f.seek(start)
        try:
            msg.recv_results_metadata(f, user_type_map)
        except DriverException:
            raise
        except Exception as exc:
            raise MalformedResult(f"RESULT metadata could not be parsed: {exc!r}") from exc
        if f.tell() != r.pos:
            raise MalformedResult("RESULT metadata length disagrees with its column specs")
        column_metadata = msg.column_metadata or result_metadata
        if not column_metadata:
            raise MalformedResult("RESULT rows come without any column")
        try:
            plan = Plan(column_metadata, self.rows_kind, protocol_version)
        except Exception as exc:
            raise MalformedResult(f"RESULT metadata cannot be decoded: {exc!r}") from exc
        _remember(self.by_metadata, key, plan)
        return plan

    cdef list _rows(self, Plan plan, Reader *r, int protocol_version):
        cdef int32_t rowcount = read_int(r)
        cdef Py_ssize_t ncols = plan.ncols, row_i, i
        if rowcount < 0:
            rowcount = 0  # what the driver makes of it: no rows
        if rowcount > (r.size - r.pos) // (4 * ncols):  # every value takes at least its 4-byte length
            raise MalformedResult(f"RESULT claims {rowcount} rows of {ncols} columns in {r.size - r.pos} bytes")
        cdef list out = PyList_New(rowcount)
        cdef PyObject **values = <PyObject **>PyMem_Malloc(ncols * sizeof(PyObject *))
        if values == NULL:
            raise MemoryError()
        for i in range(ncols):
            values[i] = NULL
        try:
            for row_i in range(rowcount):
                self._decode_row(plan, r, protocol_version, values)
                if self.rows_kind == ROWS_NAMED:
                    row = pf_tuple_row_from_owned(plan.row_class, values, ncols)
                else:
                    row = pf_dict_row_from_items(plan.template, plan.keys, values, ncols)
                    _release(values, ncols)
                Py_INCREF(row)
                PyList_SET_ITEM(out, row_i, row)
        finally:
            _release(values, ncols)
            PyMem_Free(values)
        return out

    cdef int _decode_row(self, Plan plan, Reader *r, int protocol_version, PyObject **values) except -1:
        cdef Py_ssize_t i
        cdef int32_t size
        cdef Buffer buf
        cdef const unsigned char *direct = <const unsigned char *>PyBytes_AS_STRING(plan.direct)
        cdef unsigned char kind
        cdef int f[7]
        for i in range(plan.ncols):
            size = read_int(r)
            buf.size = size
            buf.ptr = NULL if size <= 0 else <char *>take(r, size)
            kind = direct[i] if size > 0 else _DIRECT_NONE
            try:
                if kind == _DIRECT_UUID and size == 16:
                    value = pf_uuid_from_16(_UUID, _UUID_INT, _UUID_IS_SAFE, _SAFE_UNKNOWN, buf.ptr)
                elif kind == _DIRECT_UTF8:
                    value = PyUnicode_DecodeUTF8(buf.ptr, size, NULL)
                elif kind == _DIRECT_ASCII:
                    value = PyUnicode_DecodeASCII(buf.ptr, size, NULL)
                elif kind == _DIRECT_TIMESTAMP and size == 8 and pf_timestamp_fields(_int64_at(buf.ptr), f) == 0:
                    value = datetime_new(f[0], f[1], f[2], f[3], f[4], f[5], f[6], None)
                else:
                    value = from_binary(<Deserializer>plan.deserializers[i], &buf, protocol_version)
            except Exception as exc:
                raise DriverException('Failed decoding result column "%s" of type %s: %s' % (
                    plan.names[i], plan.types[i].cql_parameterized_type(), str(exc)))
            Py_INCREF(value)
            values[i] = <PyObject *>value
        return 0

    def _driver_path(self, msg, bytes body, Py_ssize_t start, protocol_version, user_type_map, result_metadata,
                     column_encryption_policy):
        """What this class does not handle (column encryption, continuous paging) goes the driver's way."""
        f = io.BytesIO(body)
        f.seek(start)
        try:
            self.fallback(msg, f, protocol_version, user_type_map, result_metadata, column_encryption_policy)
            msg.parsed_rows = self.factory(msg.column_names, msg.parsed_rows)
        except DriverException:
            raise
        except Exception as exc:
            raise MalformedResult(f"RESULT rows could not be decoded: {exc!r}") from exc


def use_built_rows(future):
    """A request-init listener (``Session.add_request_init_listener``): the rows come built from the decoder.

    The future's own row factory (from whatever execution profile the call
    named) would build every row a second time, so it becomes ``tuple_factory``,
    which hands the built rows over as they are. DSE graph row factories are
    kept: they read graph results, not rows.
    """
    rf = future.row_factory
    if rf is _tuple_factory:
        return
    module = getattr(rf, "__module__", None)
    if isinstance(module, str) and module.startswith("cassandra.datastax.graph"):
        return
    future.row_factory = _tuple_factory


def make_decode_message(RowsDecoder decoder, base_decode, message_cls):
    """A ``decode_message`` classmethod that decodes plain ROWS results without the generic machinery.

    A frame with no flags (no compression, tracing, warnings or custom payload)
    holding a ROWS result becomes a message directly; anything else goes
    through the driver's ``decode_message`` (``base_decode``), which still
    reaches ``decoder`` for ROWS through ``recv_results_rows``.
    """
    def decode_message(cls, protocol_version, user_type_map, stream_id, flags, opcode, body, decompressor,
                       result_metadata):
        cdef const unsigned char *p
        if (opcode != 0x08 or flags != 0 or type(body) is not bytes or PyBytes_GET_SIZE(body) < 4
                or cls.column_encryption_policy is not None):
            return _base_decode(base_decode, cls, protocol_version, user_type_map, stream_id, flags, opcode, body,
                                decompressor, result_metadata)
        p = <const unsigned char *>PyBytes_AS_STRING(body)
        if p[0] != 0 or p[1] != 0 or p[2] != 0 or p[3] != _RESULT_KIND_ROWS:
            return _base_decode(base_decode, cls, protocol_version, user_type_map, stream_id, flags, opcode, body,
                                decompressor, result_metadata)
        msg = message_cls.__new__(message_cls)
        msg.kind = _RESULT_KIND_ROWS
        decoder.decode(msg, body, 4, protocol_version, user_type_map, result_metadata, None)
        msg.stream_id = stream_id
        msg.trace_id = None
        return msg
    return classmethod(decode_message)


cdef _base_decode(base_decode, cls, protocol_version, user_type_map, stream_id, flags, opcode, body, decompressor,
                  result_metadata):
    """The driver's ``decode_message``; a RESULT it cannot read raises ``MalformedResult`` (a DriverException)."""
    try:
        return base_decode(cls, protocol_version, user_type_map, stream_id, flags, opcode, body, decompressor,
                           result_metadata)
    except DriverException:
        raise
    except Exception as exc:
        if opcode != 0x08:
            raise
        raise MalformedResult(f"RESULT body could not be decoded: {exc!r}") from exc


cdef inline int64_t _int64_at(const char *p):
    cdef const unsigned char *b = <const unsigned char *>p
    cdef uint64_t v = 0
    cdef int i
    for i in range(8):
        v = (v << 8) | b[i]
    return <int64_t>v


cdef inline void _release(PyObject **values, Py_ssize_t n):
    cdef Py_ssize_t i
    for i in range(n):
        Py_XDECREF(values[i])
        values[i] = NULL


cdef inline void _remember(dict cache, key, Plan plan):
    if len(cache) >= PLAN_CACHE_SIZE:
        del cache[next(iter(cache))]  # the oldest plan
    cache[key] = plan
