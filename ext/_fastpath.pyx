# cython: language_level=3
"""Decode RESULT rows straight into named rows, dicts or plain tuples, with cached decode state.

The driver's compiled path, for every ROWS message, parses the column
metadata into Python objects, builds a descriptor and a deserializer per
column, decodes each row into a tuple, and then hands the tuples to the row
factory, which builds every row a second time. Here:

* the column metadata is skipped over in C and its raw bytes (or, for a prepared statement's
  result without metadata, the identity of the prepared metadata) key a bounded cache of
  *plans*: column names and types, the driver's own deserializers, the row class or dict template;
* a miss lets the driver's own metadata parser build the plan (types are the driver's);
* each row is decoded into a scratch array and moved into its final object (one allocation).

Values are decoded by the driver's deserializers (``cimport`` of the ``.pxd``
files the driver ships), so they are the driver's values; ``pyfactories.fastpath``
checks the installed driver's declarations before importing this module.
"""

from libc.string cimport memcpy
from libc.stdint cimport int32_t, int64_t, uint64_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.unicode cimport PyUnicode_DecodeASCII, PyUnicode_DecodeUTF8
from cpython.datetime cimport datetime_new, import_datetime

from cassandra.buffer cimport Buffer
from cassandra.deserializers cimport Deserializer, from_binary

from fastpath_values cimport (DIRECT_ASCII, DIRECT_NONE, DIRECT_TIMESTAMP, DIRECT_UTF8, DIRECT_UUID,
                             pf_timestamp_fields, pf_uuid_from_16)  # values built in place
from result_reader cimport pf_read_int, pf_read_short, pf_reader, pf_reader_init, pf_skip_string, pf_skip_type, pf_take
from rows cimport (pf_adopt_row_class, pf_dict_row_from_items, pf_import_rows, pf_plain_tuple_from_owned,
                  pf_tuple_row_from_owned)

import io

include "_driver_version.pxi"

import uuid

from cassandra import DriverException
from cassandra.cqltypes import DateType, TimeUUIDType, UserType, UUIDType
from cassandra.deserializers import (DesAsciiType, DesDateType, DesUTF8Type, DesUUIDType, DesVarcharType,
                                     make_deserializers)

from pyfactories._rowclass import make_row_class

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
    _RESULT_KIND_ROWS = 0x0002
    _RESULT_KIND_VOID = 0x0001

ROWS_NAMED = 0
ROWS_DICT = 1
ROWS_TUPLE = 2

PLAN_CACHE_SIZE = 256


class MalformedResult(DriverException):
    """A RESULT message body that does not hold what its header says."""


pf_reader_init(MalformedResult)  # what the reader raises (result_reader.h)


cdef class Plan:
    """What decoding rows of one column list needs, built once per metadata."""
    cdef readonly list column_metadata, names, types
    cdef tuple deserializers, keys
    cdef bytes direct  # per column: how a non-empty value is built without the deserializer (DIRECT_*)
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
        elif rows_kind == ROWS_DICT:
            self.template = dict.fromkeys(self.keys)

    cdef void map_user_types(self, user_type_map) except *:
        """Point each UDT at the class registered for it now, as the driver's metadata parse does.

        The UDT type objects are shared by every cluster in the process, and the
        driver sets their ``mapped_class`` on each parse; a cached plan skips the
        parse, so it repeats that step.
        """
        for udt in self.udts:
            udt.mapped_class = user_type_map.get(udt.keyspace, {}).get(udt.typename)


_UUID = uuid.UUID
_UUID_INT = "int"
_UUID_IS_SAFE = "is_safe"
_SAFE_UNKNOWN = uuid.SafeUUID.unknown
_TIMEUUID_DESERIALIZE = TimeUUIDType.deserialize


def _direct_kind(cqltype, deserializer):
    des = type(deserializer)
    if cqltype is UUIDType and des is DesUUIDType:
        return DIRECT_UUID
    if cqltype is TimeUUIDType and TimeUUIDType.deserialize is _TIMEUUID_DESERIALIZE:
        return DIRECT_UUID
    if des is DesUTF8Type or des is DesVarcharType:
        return DIRECT_UTF8
    if des is DesAsciiType:
        return DIRECT_ASCII
    if des is DesDateType and _TIMESTAMPS_IN_PLACE:
        return DIRECT_TIMESTAMP
    return DIRECT_NONE


cdef bint _same_timestamps_as_the_driver() except -1:
    """Whether in-place timestamps are the installed driver's (probes: float vs exact, years 1, 9999)."""
    cdef Buffer buf
    cdef int f[7]
    des = make_deserializers([DateType])[0]
    for ms in (0, -1, 1_700_000_000_123, 253_402_214_399_999, -62_135_423_999_999, 4_102_444_800_001):
        b = int(ms).to_bytes(8, "big", signed=True)
        buf.ptr, buf.size = <char *>PyBytes_AS_STRING(b), 8
        if pf_timestamp_fields(ms, f) != 0 or (from_binary(<Deserializer>des, &buf, 4) !=
                                               datetime_new(f[0], f[1], f[2], f[3], f[4], f[5], f[6], None)):
            return False
    return True


_TIMESTAMPS_IN_PLACE = _same_timestamps_as_the_driver()


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
        if rows_kind not in (ROWS_NAMED, ROWS_DICT, ROWS_TUPLE):
            raise ValueError(f"unknown kind of rows: {rows_kind}")
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
        cdef pf_reader r
        r.buf = PyBytes_AS_STRING(body)
        r.size = PyBytes_GET_SIZE(body)
        r.pos = start
        cdef int32_t flags = pf_read_int(&r)
        cdef int32_t colcount = pf_read_int(&r)
        cdef int32_t n
        if column_encryption_policy is not None or flags & _CONTINUOUS_PAGING:
            return self._driver_path(msg, body, start, protocol_version, user_type_map, result_metadata,
                                     column_encryption_policy)
        if flags & _HAS_MORE_PAGES:
            n = pf_read_int(&r)
            msg.paging_state = None if n < 0 else <bytes>pf_take(&r, n)[:n]
        cdef Plan plan
        if flags & _NO_METADATA:
            if not result_metadata:
                return self._driver_path(msg, body, start, protocol_version, user_type_map, result_metadata,
                                         column_encryption_policy)
            plan = self._prepared_plan(result_metadata, protocol_version)
        else:
            if flags & _METADATA_ID:
                n = pf_read_short(&r)
                msg.result_metadata_id = <bytes>pf_take(&r, n)[:n]
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

    cdef Plan _metadata_plan(self, msg, bytes body, pf_reader *r, Py_ssize_t start, int32_t flags, int32_t colcount,
                             int protocol_version, user_type_map, result_metadata):
        cdef Py_ssize_t i, spec_start = r.pos
        if colcount < 0:
            raise MalformedResult(f"RESULT metadata has a negative column count ({colcount})")
        if flags & _GLOBAL_TABLES_SPEC:
            pf_skip_string(r)
            pf_skip_string(r)
        for i in range(colcount):
            if not flags & _GLOBAL_TABLES_SPEC:
                pf_skip_string(r)
                pf_skip_string(r)
            pf_skip_string(r)
            pf_skip_type(r, 0)
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

    cdef list _rows(self, Plan plan, pf_reader *r, int protocol_version):
        cdef int32_t rowcount = pf_read_int(r)
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
                elif self.rows_kind == ROWS_TUPLE:
                    row = pf_plain_tuple_from_owned(values, ncols)
                else:
                    row = pf_dict_row_from_items(plan.template, plan.keys, values, ncols)
                    _release(values, ncols)
                Py_INCREF(row)
                PyList_SET_ITEM(out, row_i, row)
        finally:
            _release(values, ncols)
            PyMem_Free(values)
        return out

    cdef int _decode_row(self, Plan plan, pf_reader *r, int protocol_version, PyObject **values) except -1:
        cdef Py_ssize_t i
        cdef int32_t size
        cdef Buffer buf
        cdef const unsigned char *direct = <const unsigned char *>PyBytes_AS_STRING(plan.direct)
        cdef unsigned char kind
        cdef int f[7]
        for i in range(plan.ncols):
            size = pf_read_int(r)
            buf.size = size
            buf.ptr = NULL if size <= 0 else <char *>pf_take(r, size)
            kind = direct[i] if size > 0 else DIRECT_NONE
            try:
                if kind == DIRECT_UUID and size == 16:
                    value = pf_uuid_from_16(_UUID, _UUID_INT, _UUID_IS_SAFE, _SAFE_UNKNOWN, buf.ptr)
                elif kind == DIRECT_UTF8:
                    value = PyUnicode_DecodeUTF8(buf.ptr, size, NULL)
                elif kind == DIRECT_ASCII:
                    value = PyUnicode_DecodeASCII(buf.ptr, size, NULL)
                elif kind == DIRECT_TIMESTAMP and size == 8 and pf_timestamp_fields(_int64_at(buf.ptr), f) == 0:
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


include "_decode_message.pxi"


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
