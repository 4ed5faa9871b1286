# cython: language_level=3
"""Decode RESULT rows straight into named rows, dicts or plain tuples, with cached decode state.

The driver's compiled path, for every ROWS message, parses the column
metadata into Python objects, builds a descriptor and a deserializer per
column, decodes each row into a tuple, and then hands the tuples to the row
factory, which builds every row a second time. Here:

* the column metadata is skipped over in C and its raw bytes (with the protocol version and the
  column count) key a bounded cache of *plans*: column names and types, the driver's own
  deserializers, the row class or dict template. For a prepared statement's result without
  metadata, the plan is found by the identity of the statement's ``result_metadata`` and used only
  while that list still holds the very entries the plan was built from (changed in place: a miss);
* a miss lets the driver's own metadata parser build the plan (types are the driver's); a plan
  with a custom type the driver knows no class for is not kept (a class defined later changes it);
* what it does not take on trust goes the driver's way: rows whose metadata has no column of its
  own, ``result_metadata`` that is not an exact list or tuple of the driver's column tuples, a file
  that is not the driver's BytesIO;
* each row is decoded into a scratch array and moved into its final object (one allocation).

Values are decoded by the driver's deserializers (``cimport`` of the ``.pxd``
files the driver ships), so they are the driver's values; ``pyfactories.decoding``
checks the installed driver's declarations before importing this module.
"""

from libc.string cimport memcpy
from libc.stdint cimport int32_t, int64_t, uint64_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from cpython.list cimport PyList_New, PyList_SET_ITEM

cdef extern from "Python.h":
    void PyObject_GC_Track(void *op)
    void PyObject_GC_UnTrack(void *op)
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

cdef object _BytesIO = io.BytesIO

import uuid

from cassandra import DriverException
from cassandra.cqltypes import DateType, TimeUUIDType, UserType, UUIDType, _UnrecognizedType
from cassandra.deserializers import (DesAsciiType, DesDateType, DesUTF8Type, DesUUIDType, DesVarcharType,
                                     make_deserializers)

from pyfactories.rows._rowclass import make_row_class

pf_import_rows()  # rows are allocated from pyfactories.rows._rows' free list
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
    # kinds of rows
    _ROWS_NAMED = 0
    _ROWS_DICT = 1
    _ROWS_TUPLE = 2

ROWS_NAMED = _ROWS_NAMED
ROWS_DICT = _ROWS_DICT
ROWS_TUPLE = _ROWS_TUPLE

cdef enum:
    _PLAN_CACHE_SIZE = 256

#: How many plans a decoder keeps per cache (fixed: the module attribute is for reading).
PLAN_CACHE_SIZE = _PLAN_CACHE_SIZE


class MalformedResult(DriverException):
    """A RESULT message body that does not hold what its header says."""


pf_reader_init(MalformedResult)  # what the reader raises (result_reader.h)


include "_rowplans.pxi"


cdef class RowsDecoder:
    """``recv_results_rows`` for one kind of row, with its plan caches."""
    cdef int rows_kind
    cdef dict by_metadata  # protocol version, table-spec flag, column count, column specs' bytes -> Plan
    cdef dict by_prepared  # id(prepared result metadata) -> Plan (which keeps that object, and checks its entries)
    cdef object fallback  # the driver's own recv_results_rows
    cdef object factory  # row factory applied after the driver's path
    cdef readonly Py_ssize_t hits, misses
    cdef bint built

    def __init__(self, int rows_kind, fallback, factory):
        if self.built:
            raise TypeError("a RowsDecoder is set up once")
        if rows_kind not in (_ROWS_NAMED, _ROWS_DICT, _ROWS_TUPLE):
            raise ValueError(f"unknown kind of rows: {rows_kind}")
        self.rows_kind = rows_kind
        self.by_metadata = {}
        self.by_prepared = {}
        self.fallback = fallback
        self.factory = factory
        self.built = True

    def clear(self):
        if self.built:
            self.by_metadata.clear()
            self.by_prepared.clear()
        self.hits = self.misses = 0

    def __call__(self, msg, f, int protocol_version, user_type_map, result_metadata, column_encryption_policy):
        """``ResultMessage.recv_results_rows``: ``f`` is the body as a BytesIO, at the rows' metadata."""
        # getvalue() shares the frame's bytes object (no copy) while the BytesIO is unchanged. Anything
        # but the driver's own BytesIO (a subclass may say one thing to getvalue and another to read)
        # is read by the driver.
        if type(f) is not _BytesIO:
            return self._driver_path(msg, f, protocol_version, user_type_map, result_metadata,
                                     column_encryption_policy)
        body = f.getvalue()
        start = f.tell()
        if type(body) is not bytes or type(start) is not int or not 0 <= start <= len(<bytes>body):
            raise MalformedResult("RESULT rows start outside the body")
        self.decode(msg, body, start, protocol_version, user_type_map, result_metadata, column_encryption_policy)

    cdef decode(self, msg, bytes body, Py_ssize_t start, int protocol_version, user_type_map, result_metadata,
                column_encryption_policy):
        if not self.built:
            raise TypeError("RowsDecoder.__init__ was not called")
        if body is None or start < 0 or start > PyBytes_GET_SIZE(body):
            raise MalformedResult("RESULT rows start outside the body")
        cdef pf_reader r
        r.buf = PyBytes_AS_STRING(body)
        r.size = PyBytes_GET_SIZE(body)
        r.pos = start
        cdef int32_t flags = pf_read_int(&r)
        cdef int32_t colcount = pf_read_int(&r)
        cdef int32_t n
        if column_encryption_policy is not None or flags & _CONTINUOUS_PAGING:
            return self._driver_path(msg, _at(body, start), protocol_version, user_type_map, result_metadata,
                                     column_encryption_policy)
        if flags & _HAS_MORE_PAGES:
            n = pf_read_int(&r)
            if n < 0:  # the driver reads the rest of the body as the paging state, then fails on the metadata
                raise MalformedResult(f"RESULT paging state has a negative length ({n})")
            msg.paging_state = <bytes>pf_take(&r, n)[:n]
        cdef Plan plan
        if flags & _NO_METADATA:
            plan = self._prepared_plan(result_metadata, protocol_version)
        elif colcount <= 0:
            # No column of its own (the driver reads a negative count as none): the driver's rows are those
            # of the prepared statement's result_metadata, or of whatever else it was given. Rare: its way.
            plan = None
        else:
            if flags & _METADATA_ID:
                n = pf_read_short(&r)
                msg.result_metadata_id = <bytes>pf_take(&r, n)[:n]
            plan = self._metadata_plan(msg, body, &r, start, flags, colcount, protocol_version, user_type_map)
        if plan is None:
            return self._driver_path(msg, _at(body, start), protocol_version, user_type_map, result_metadata,
                                     column_encryption_policy)
        msg.column_names = list(plan.names)
        msg.column_types = list(plan.types)
        msg.parsed_rows = self._rows(plan, &r, protocol_version)

    cdef Plan _prepared_plan(self, result_metadata, int protocol_version):
        """The plan of a prepared statement's ``result_metadata``; None (the driver's path) for anything
        but a non-empty exact list or tuple of the driver's column tuples."""
        if type(result_metadata) is not list and type(result_metadata) is not tuple:
            return None
        cdef Plan plan = self.by_prepared.get(id(result_metadata))
        # The plan keeps the object (so its id is not reused) and the entries it was built from: an
        # entry replaced in place since, or a list grown or cut, is a miss.
        if (plan is not None and plan.source is result_metadata and plan.rows_kind == self.rows_kind
                and _same_columns(plan.column_metadata, result_metadata)):
            self.hits += 1
            return plan
        cdef tuple columns = _plain_columns(result_metadata)
        if columns is None or len(columns) == 0:
            return None
        self.misses += 1
        try:
            plan = Plan(columns, self.rows_kind, protocol_version, source=result_metadata)
        except Exception:
            return None  # types the driver has no deserializer for: let it say so
        _remember(self.by_prepared, id(result_metadata), plan)
        return plan

    cdef Plan _metadata_plan(self, msg, bytes body, pf_reader *r, Py_ssize_t start, int32_t flags, int32_t colcount,
                             int protocol_version, user_type_map):
        cdef Py_ssize_t i, spec_start = r.pos
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
        cdef bytes key = PyBytes_FromStringAndSize(NULL, spec_len + 9)
        cdef unsigned char *k = <unsigned char *>PyBytes_AS_STRING(key)
        cdef int32_t version = protocol_version
        memcpy(k, &version, 4)
        k[4] = flags & _GLOBAL_TABLES_SPEC
        memcpy(k + 5, &colcount, 4)
        memcpy(k + 9, r.buf + spec_start, spec_len)
        cdef Plan plan = self.by_metadata.get(key)
        if plan is not None and plan.rows_kind == self.rows_kind:
            if plan.udts:
                try:
                    plan.map_user_types(user_type_map)
                except Exception as exc:  # as a miss says it (the driver's parse reads the same map)
                    raise MalformedResult(f"RESULT metadata could not be parsed: {exc!r}") from exc
            self.hits += 1
            msg.column_metadata = list(plan.column_metadata)
            return plan
        self.misses += 1
        # A miss: the driver's own parser reads the metadata (and sets its attributes on msg).
        f = _at(body, start)
        try:
            msg.recv_results_metadata(f, user_type_map)
        except DriverException:
            raise
        except Exception as exc:
            raise MalformedResult(f"RESULT metadata could not be parsed: {exc!r}") from exc
        if f.tell() != r.pos:
            raise MalformedResult("RESULT metadata length disagrees with its column specs")
        cdef tuple columns = _plain_columns(msg.column_metadata)
        if columns is None or len(columns) != colcount:
            raise MalformedResult(f"RESULT metadata of {colcount} columns was read as {msg.column_metadata!r}")
        try:
            plan = Plan(columns, self.rows_kind, protocol_version)
        except Exception as exc:
            raise MalformedResult(f"RESULT metadata cannot be decoded: {exc!r}") from exc
        if not plan.unrecognized:  # else the same bytes may name another class next time: parsed each time
            _remember(self.by_metadata, key, plan)
        return plan

    cdef list _rows(self, Plan plan, pf_reader *r, int protocol_version):
        # Everything the loop sizes or indexes with, taken once and held here (a plan never changes,
        # and these references keep what the loop reads alive whatever Python code a value runs).
        cdef Py_ssize_t ncols = plan.ncols, row_i, i
        cdef tuple deserializers = plan.deserializers, names = plan.names, types = plan.types, keys = plan.keys
        cdef bytes direct = plan.direct
        cdef int kind = plan.rows_kind
        row_class, template = plan.row_class, plan.template
        if (not plan.built or ncols <= 0 or len(deserializers) != ncols or len(direct) != ncols
                or len(names) != ncols or len(types) != ncols or len(keys) != ncols
                or (kind == _ROWS_NAMED and row_class is None)
                or (kind == _ROWS_DICT and type(template) is not dict)):
            raise MalformedResult("RESULT decode plan is inconsistent")
        cdef int32_t rowcount = pf_read_int(r)
        if rowcount < 0:
            rowcount = 0  # what the driver makes of it: no rows
        if rowcount > (r.size - r.pos) // (4 * ncols):  # every value takes at least its 4-byte length
            raise MalformedResult(f"RESULT claims {rowcount} rows of {ncols} columns in {r.size - r.pos} bytes")
        # Its items are NULL until set: until then the collector must not hand it to Python code (a
        # value's deserializer may walk gc.get_objects()), so it is tracked only once it is full.
        cdef list out = PyList_New(rowcount)
        PyObject_GC_UnTrack(<void *>out)
        cdef PyObject **values = <PyObject **>PyMem_Malloc(ncols * sizeof(PyObject *))
        if values == NULL:
            raise MemoryError()
        for i in range(ncols):
            values[i] = NULL
        try:
            for row_i in range(rowcount):
                _decode_row(deserializers, <const unsigned char *>PyBytes_AS_STRING(direct), names, types, ncols,
                            r, protocol_version, values)
                if kind == _ROWS_NAMED:
                    row = pf_tuple_row_from_owned(row_class, values, ncols)
                elif kind == _ROWS_TUPLE:
                    row = pf_plain_tuple_from_owned(values, ncols)
                else:
                    row = pf_dict_row_from_items(template, keys, values, ncols)
                    _release(values, ncols)
                Py_INCREF(row)
                PyList_SET_ITEM(out, row_i, row)
        finally:
            _release(values, ncols)
            PyMem_Free(values)
        PyObject_GC_Track(<void *>out)
        return out

    def _driver_path(self, msg, f, protocol_version, user_type_map, result_metadata, column_encryption_policy):
        """What this class does not handle (column encryption, continuous paging, rows without
        columns of their own or with result metadata it does not take on trust) goes the driver's way."""
        try:
            self.fallback(msg, f, protocol_version, user_type_map, result_metadata, column_encryption_policy)
            msg.parsed_rows = self.factory(msg.column_names, msg.parsed_rows)
        except DriverException:
            raise
        except Exception as exc:
            raise MalformedResult(f"RESULT rows could not be decoded: {exc!r}") from exc


cdef int _decode_row(tuple deserializers, const unsigned char *direct, tuple names, tuple types, Py_ssize_t ncols,
                     pf_reader *r, int protocol_version, PyObject **values) except -1:
    """Decodes one row's ``ncols`` values into ``values`` (new references); the caller checked that the
    tuples and ``direct`` hold ``ncols`` items."""
    cdef Py_ssize_t i
    cdef int32_t size
    cdef Buffer buf
    cdef unsigned char kind
    cdef int f[7]
    for i in range(ncols):
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
                value = from_binary(<Deserializer>deserializers[i], &buf, protocol_version)
        except Exception as exc:
            raise DriverException('Failed decoding result column "%s" of type %s: %s' % (
                names[i], types[i].cql_parameterized_type(), str(exc)))
        Py_INCREF(value)
        values[i] = <PyObject *>value
    return 0


cdef object _at(bytes body, Py_ssize_t start):
    """The body as a BytesIO at ``start``, for the driver's readers."""
    f = io.BytesIO(body)
    f.seek(start)
    return f


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
    while cache and len(cache) >= _PLAN_CACHE_SIZE:
        del cache[next(iter(cache))]  # the oldest plan
    cache[key] = plan
