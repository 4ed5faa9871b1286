# cython: language_level=3
"""Compiled row factories: the same functions as ``pyfactories.rows._rows_py``.

What costs time in the driver's factories is not the rows but what is rebuilt
for every result set (a namedtuple class) and the per-row Python calls
(``Row(*row)``, ``dict(zip(...))``). Here the class and the dict keys come from
a bounded LRU cache keyed by the column list, with a fast path when a result
has the same columns as the previous one; rows are then filled in C, one
allocation each, by copying references out of the decoded value tuples
(``rows.h``: named rows come from a free list like tuples do, dict rows are
copies of a template with the values stored into them).

Input is checked as in the pure-Python twin (same exceptions, same messages):
nothing the caller passes can make this module read out of bounds. An exact
list or tuple (the rows, a row, the column names) is read in C; a subclass is
read through its own iteration, as the driver reads it, and copied where it
must be sized, so a ``__len__``/``__getitem__`` that lies changes nothing. The
three factories read the rows to the list's current end, as the driver's
``for row in rows`` reads them, even when a row's own ``__iter__`` makes the
list grow or shrink (the typed factories check every row before building any).
"""

cimport cython

from collections import OrderedDict

from cpython.dict cimport PyDict_Copy, PyDict_SetItem
from cpython.list cimport PyList_Append, PyList_GET_SIZE, PyList_New, PyList_SET_ITEM
from cpython.object cimport PyObject_SetItem
from cpython.ref cimport Py_INCREF

from pyfactories.rows._columns import CacheInfo, DEFAULT_CACHE_SIZE, _check_maxsize
from pyfactories.rows._rowclass import make_row_class

import threading

include "_driver_version.pxi"

# The cassandra-driver whose .pxd files the fast path (pyfactories.decoding._fastpath) was compiled
# against; pyfactories.decoding reads it here, before importing that module.
BUILT_AGAINST_DRIVER = DRIVER_VERSION
BUILT_AGAINST_PXD = DRIVER_PXD_DIGEST  # the declarations of the driver's .pxd files it cimports

cdef extern from *:
    """
    #define PF_ROWS_OWNER  /* the row free list lives in this module (see rows.h) */
    """

# After the #define above: Cython emits the includes in the order it meets them.
from rows cimport pf_adopt_row_class, pf_free_list_counts, pf_new_dict_row, pf_new_tuple_row, pf_rows_capsule

# The row allocator, for pyfactories.decoding._fastpath (which must share its free list).
_row_api = pf_rows_capsule()


def _row_free_list_counts():
    """Rows of each length (index) now kept on the row free list (for tests)."""
    return pf_free_list_counts()

cdef extern from "Python.h":
    bint PyList_CheckExact(object)
    bint PyList_Check(object)
    bint PyTuple_CheckExact(object)
    bint PyTuple_Check(object)
    bint PyUnicode_Check(object)
    bint PyUnicode_CheckExact(object)
    bint PyType_IsSubtype(type, type)
    Py_ssize_t PySequence_Fast_GET_SIZE(object)
    void Py_SET_SIZE(object, Py_ssize_t)
    void PyObject_GC_Track(void *op)
    void PyObject_GC_UnTrack(void *op)


cdef inline object _rows_of(object rows):
    """``rows`` itself when it is an exact list or tuple, else (a list or tuple subclass) a list of what its
    own iteration yields: what the driver reads, and nothing a lying ``__len__``/``__getitem__`` says."""
    if PyList_CheckExact(rows) or PyTuple_CheckExact(rows):
        return rows
    _check_rows(rows)
    return [row for row in rows]


cdef inline int _check_rows(object rows) except -1:
    if not (PyList_Check(rows) or PyTuple_Check(rows)):
        raise TypeError(f"rows must be a list of rows, not {type(rows).__name__}")
    return 0


cdef inline list _out_for(object rows):
    """The list the rows of ``rows`` are put in: one slot per row already there when ``rows`` is an exact
    list or tuple (filled by :func:`_put`, ended by :func:`_ended`), else empty (a subclass is not sized).

    Its slots are NULL until filled, and Python code runs while they are (a row's ``__iter__``, a
    finalizer): so the collector does not know the list, which ``gc.get_objects()`` would otherwise
    hand to that code, until :func:`_ended` gives it back."""
    cdef list out
    if PyList_CheckExact(rows) or PyTuple_CheckExact(rows):
        out = PyList_New(PySequence_Fast_GET_SIZE(rows))
    else:
        _check_rows(rows)
        out = []
    PyObject_GC_UnTrack(<void *>out)
    return out


cdef inline int _put(list out, Py_ssize_t i, object row) except -1:
    """Row ``i`` into its slot, or appended past the slots: the rows grew while they were read (a row's
    ``__iter__`` is Python code), and the driver's ``for row in rows`` reads the new ones too."""
    if i < PyList_GET_SIZE(out):
        Py_INCREF(row)
        PyList_SET_ITEM(out, i, row)
        return 0
    return PyList_Append(out, row)


cdef inline list _ended(list out, Py_ssize_t filled):
    """``out`` cut to its ``filled`` rows: fewer than its slots when the rows shrank while they were read
    (the driver's iteration stops where the list ends). The slots cut off were never filled."""
    if filled < PyList_GET_SIZE(out):
        Py_SET_SIZE(out, filled)
    PyObject_GC_Track(<void *>out)  # every slot filled: the collector may see it now
    return out


cdef inline object _row_values(object row, Py_ssize_t i, Py_ssize_t ncols):
    """Row ``i`` as an exact list or tuple of ``ncols`` values: the row itself, or a copy of a subclass."""
    cdef Py_ssize_t size
    if PyTuple_CheckExact(row) or PyList_CheckExact(row):
        size = PySequence_Fast_GET_SIZE(row)
        if size != ncols:
            raise ValueError(f"row {i} has {size} values but there are {ncols} columns")
        return row
    if not (PyTuple_Check(row) or PyList_Check(row)):
        raise TypeError(f"row {i} must be a tuple or list, not {type(row).__name__}")
    return _copied_row(row, i, ncols)


cdef tuple _copied_row(object row, Py_ssize_t i, Py_ssize_t ncols):
    """The values a list or tuple subclass yields when iterated (as ``Row(*row)`` and ``zip`` read it),
    at most one more than ``ncols`` of them: never what its ``__len__`` or its storage says."""
    cdef list values = []
    for value in row:
        if len(values) == ncols:
            raise ValueError(f"row {i} has more than {ncols} values but there are {ncols} columns")
        values.append(value)
    if len(values) != ncols:
        raise ValueError(f"row {i} has {len(values)} values but there are {ncols} columns")
    return tuple(values)


cdef tuple _column_key(object colnames):
    """Check ``colnames`` and return it as a tuple of exact ``str`` (no user ``__eq__``/``__hash__`` inside)."""
    if not (PyList_Check(colnames) or PyTuple_Check(colnames)):
        raise TypeError(f"colnames must be a list or tuple of str, not {type(colnames).__name__}")
    names = []
    for i, name in enumerate(colnames):
        if not PyUnicode_Check(name):
            raise TypeError(f"column name {i} must be str, not {type(name).__name__}")
        names.append(name if PyUnicode_CheckExact(name) else str.__str__(name))
    return tuple(names)


cdef inline bint _same_columns(tuple key, object colnames):
    """True when ``colnames`` (a checked list/tuple) holds exactly the strings of ``key``."""
    cdef Py_ssize_t i, n = len(key)
    if PySequence_Fast_GET_SIZE(colnames) != n:
        return False
    for i in range(n):
        name = colnames[i]
        if name is key[i]:
            continue
        if not PyUnicode_CheckExact(name) or name != key[i]:
            return False
    return True


# What the fast path of an empty cache compares with: a key no column list equals (not even an empty one).
cdef tuple _NO_LAST = ((object(),), None)


@cython.auto_pickle(False)  # its entries and the last lookup are private: no state to set from outside
cdef class ColumnSetCache:
    """A bounded LRU cache from column lists to what is built from them.

    Hits take no lock: under the GIL the dict operations on exact-``str`` keys
    run no Python code, so they cannot interleave. A miss builds its value
    without the lock (building runs Python code, which may use this cache
    again) and stores it under the lock unless another caller stored one
    first: then that one is used, so a column list has one value at a time.
    """

    cdef object _build
    cdef object _entries
    cdef object _lock
    cdef tuple _last
    cdef Py_ssize_t _maxsize
    cdef readonly Py_ssize_t hits, misses

    def __init__(self, build, maxsize=DEFAULT_CACHE_SIZE):
        self._build = build
        self._entries = OrderedDict()
        self._lock = threading.RLock()  # dropping an entry may run a finalizer that uses the cache again
        self._last = _NO_LAST
        self._maxsize = _check_maxsize(maxsize)

    cdef object get(self, object colnames):
        cdef tuple last = self._last
        # Exact list or tuple only: a subclass's items are read through its own iteration (_column_key)
        if (PyList_CheckExact(colnames) or PyTuple_CheckExact(colnames)) and _same_columns(<tuple>last[0], colnames):
            self.hits += 1
            return last[1]
        cdef tuple key = _column_key(colnames)
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
            self.hits += 1
        else:
            # Built outside the lock: building runs Python code (logging, reading a class) that may call
            # back into this cache, from this thread or through another one. The first value stored wins,
            # so every caller gets the same value for a column list once one is cached.
            built = self._build(key)
            with self._lock:
                value = self._entries.get(key)
                if value is None:
                    value = built
                    self.misses += 1
                    self._entries[key] = value
                    self._evict()
                else:
                    self._entries.move_to_end(key)
                    self.hits += 1
        self._last = (key, value)
        return value

    cdef void _evict(self) except *:
        while len(self._entries) > self._maxsize:
            self._entries.popitem(last=False)

    def resize(self, maxsize):
        with self._lock:
            self._maxsize = _check_maxsize(maxsize)
            self._evict()
            self._last = _NO_LAST

    def clear(self):
        with self._lock:
            self._entries.clear()
            self._last = _NO_LAST
            self.hits = self.misses = 0

    def info(self):
        return CacheInfo(self.hits, self.misses, self._maxsize, len(self._entries))


def _checked_row_class(tuple key):
    cls = make_row_class(key)
    pf_adopt_row_class(cls)  # pf_new_tuple_row relies on the tuple memory layout: refuse anything else
    return key, cls


def _dict_template(tuple key):
    return key, dict.fromkeys(key)


cdef ColumnSetCache _row_classes = ColumnSetCache(_checked_row_class)
cdef ColumnSetCache _key_sets = ColumnSetCache(_dict_template)

# Each factory reads the rows as the driver's does (``for row in rows``: a list that grows or shrinks
# while a row's own ``__iter__`` runs is read to its current end) into a preallocated list; if a row is
# refused half-way, the list's empty slots are simply skipped when it is freed.


def cached_named_tuple_factory(colnames, rows):
    """Rows as namedtuples, like the driver's ``named_tuple_factory``, with the class cached."""
    cdef tuple keys
    keys, cls = _row_classes.get(colnames)
    cdef list out = _out_for(rows)
    cdef Py_ssize_t i = 0, ncols = len(keys)
    for row in rows:
        _put(out, i, pf_new_tuple_row(cls, _row_values(row, i, ncols)))
        i += 1
    return _ended(out, i)


def dict_factory(colnames, rows):
    """Rows as dicts, like the driver's ``dict_factory`` (a repeated column: the last value wins)."""
    cdef tuple keys
    keys, template = _key_sets.get(colnames)
    cdef list out = _out_for(rows)
    cdef Py_ssize_t i = 0, ncols = len(keys)
    for row in rows:
        _put(out, i, pf_new_dict_row(template, keys, _row_values(row, i, ncols)))
        i += 1
    return _ended(out, i)


def ordered_dict_factory(colnames, rows):
    """Rows as ``OrderedDict``, like the driver's ``ordered_dict_factory``."""
    cdef tuple keys = _key_sets.get(colnames)[0]
    cdef list out = _out_for(rows)
    cdef Py_ssize_t i = 0, j, ncols = len(keys)
    for row in rows:
        values = _row_values(row, i, ncols)
        ordered = OrderedDict()
        for j in range(ncols):
            PyObject_SetItem(ordered, keys[j], values[j])  # bounds-checked reads of an exact list or tuple
        _put(out, i, ordered)
        i += 1
    return _ended(out, i)


def cache_info():
    """Hits, misses and size of the row-class cache."""
    return _row_classes.info()


def set_cache_size(maxsize):
    """Bound both column-list caches (row classes and dict keys) to ``maxsize`` entries."""
    _row_classes.resize(maxsize)
    _key_sets.resize(maxsize)


def cache_clear():
    _row_classes.clear()
    _key_sets.clear()


include "_typed.pxi"
