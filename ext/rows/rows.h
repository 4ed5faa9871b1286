/* Row builders shared by rows/_rows.pyx and _fastpath.pyx.
 *
 * A row is an instance of a namedtuple class (a tuple subclass with the tuple
 * memory layout, checked when the class is cached), filled the way
 * tuple.__new__(cls, values) fills it, minus argument parsing and iteration.
 *
 * Declared for Cython in rows.pxd. The module that owns the free list defines
 * PF_ROWS_OWNER before this header is first included (see below).
 */
#ifndef PF_ROWS_H
#define PF_ROWS_H

#include <Python.h>

/* Row classes and their free list.
 *
 * A row class is a namedtuple class: a heap type directly under tuple, with
 * tuple's memory layout (no __dict__, no weakrefs). CPython recycles freed
 * tuples through a free list, but not instances of tuple subclasses, which it
 * allocates and frees through the general-purpose paths (and every such
 * allocation counts towards the next garbage collection). So when a row class
 * is adopted (pf_adopt_row_class), its tp_dealloc becomes pf_row_dealloc,
 * which keeps the memory of freed rows on a free list per row length, as
 * tuple's does, and pf_alloc_row takes rows from there first. A row on the
 * free list holds no references (not even to its class), so rows of any
 * adopted class of the same length share one list.
 *
 * One module owns the free list (_rows, which defines PF_ROWS_OWNER);
 * the others reach it through a capsule, so every module allocates and frees
 * through the same lists. Debug builds (reference counting, traced refs) and
 * free-threaded builds keep the general-purpose paths.
 */
#if defined(Py_REF_DEBUG) || defined(Py_TRACE_REFS) || defined(Py_GIL_DISABLED)
#define PF_FREE_LIST 0
#else
#define PF_FREE_LIST 1
#endif
#define PF_FREE_LIST_LENGTHS 33   /* rows of 1 to 32 columns */
#define PF_FREE_LIST_MAX 2000     /* rows kept per length, as tuple's free list */
#define PF_ROWS_CAPSULE "pyfactories.rows._rows._row_api"

typedef struct {
    PyObject *(*alloc)(PyObject *cls, Py_ssize_t n);
    int (*adopt)(PyObject *cls);
} pf_row_api;

#ifdef PF_ROWS_OWNER

static PyTupleObject *pf_free_list[PF_FREE_LIST_LENGTHS];
static int pf_free_count[PF_FREE_LIST_LENGTHS];
static destructor pf_heap_tuple_dealloc = NULL;  /* what CPython gives a tuple subclass */

static void pf_row_dealloc(PyObject *op) {
    PyTypeObject *tp = Py_TYPE(op);
    Py_ssize_t i, n = Py_SIZE(op);
    /* An instance of a subclass of a row class also arrives here (as its base's
       dealloc), after CPython has cleared what the subclass added. */
    int own = tp->tp_dealloc == pf_row_dealloc;
    if (own && tp->tp_finalize != NULL) {  /* a __del__ set on the class later */
        if (PyObject_CallFinalizerFromDealloc(op) < 0) return;  /* resurrected */
        /* The finalizer may have assigned __class__ (to another row class, the only one
           compatible): the row now holds a reference to that class, not to this one. */
        tp = Py_TYPE(op);
        own = tp->tp_dealloc == pf_row_dealloc;
    }
    PyObject_GC_UnTrack(op);
    Py_TRASHCAN_BEGIN(op, pf_row_dealloc)
    for (i = n; --i >= 0; ) Py_XDECREF(PyTuple_GET_ITEM(op, i));
    /* A row whose finalizer ran keeps that mark in its memory (so it would never run for the
       row reusing it): such a row is freed, not kept. */
    if (own && tp->tp_finalize == NULL && n > 0 && n < PF_FREE_LIST_LENGTHS
            && pf_free_count[n] < PF_FREE_LIST_MAX && !PyObject_GC_IsFinalized(op)) {
        /* item 0 links the list, as in tuple's free list */
        ((PyTupleObject *)op)->ob_item[0] = (PyObject *)pf_free_list[n];
        pf_free_list[n] = (PyTupleObject *)op;
        pf_free_count[n]++;
    } else {
        tp->tp_free(op);
    }
    Py_DECREF(tp);  /* a heap type's instances own a reference to it */
    Py_TRASHCAN_END
}

/* A row of class `cls` with room for `n` items, not yet tracked by the garbage
 * collector and with its items unset: the caller fills every item before
 * anything else runs, then calls pf_track_row. Unlike tp_alloc this neither
 * zeroes the items nor tracks the row, as tuple's own allocator does. */
static PyObject *pf_alloc_row_owned(PyObject *cls, Py_ssize_t n) {
    PyTypeObject *tp = (PyTypeObject *)cls;
    PyTupleObject *op;
    if (n > 0 && n < PF_FREE_LIST_LENGTHS && (op = pf_free_list[n]) != NULL
            && tp->tp_dealloc == pf_row_dealloc) {
        pf_free_list[n] = (PyTupleObject *)op->ob_item[0];
        pf_free_count[n]--;
        Py_SET_TYPE(op, tp);
        Py_INCREF(tp);
#if PY_VERSION_HEX < 0x030D0000
        _Py_NewReference((PyObject *)op);
#else
        Py_SET_REFCNT(op, 1);
#endif
        return (PyObject *)op;
    }
    return (PyObject *)PyObject_GC_NewVar(PyVarObject, tp, n);
}

/* Check that `cls` has the tuple memory layout the row builders write into
 * (TypeError if not), and route its instances through the free list when it
 * is a plain heap subclass of tuple with nothing to finalize. Idempotent. */
static int pf_adopt_row_class(PyObject *cls) {
    PyTypeObject *tp = (PyTypeObject *)cls;
    /* no __dict__ or weakrefs either: from 3.12 those live before the object
       (managed), without changing tp_basicsize */
    if (!PyType_Check(cls) || !PyType_IsSubtype(tp, &PyTuple_Type)
            || tp->tp_basicsize != PyTuple_Type.tp_basicsize
            || tp->tp_itemsize != PyTuple_Type.tp_itemsize
            || tp->tp_dictoffset != 0 || tp->tp_weaklistoffset != 0) {
        PyErr_Format(PyExc_TypeError, "row class %R is not a plain tuple subclass", cls);
        return -1;
    }
    if (!PF_FREE_LIST || tp->tp_dealloc == pf_row_dealloc) return 0;
    if (pf_heap_tuple_dealloc == NULL) {  /* learn it from a subclass of our own */
        PyObject *probe = PyObject_CallFunction((PyObject *)&PyType_Type, "s(O){s()}",
                                                "pf_probe", (PyObject *)&PyTuple_Type, "__slots__");
        if (probe == NULL) return -1;
        pf_heap_tuple_dealloc = ((PyTypeObject *)probe)->tp_dealloc;
        Py_DECREF(probe);
    }
    if (tp->tp_dealloc == pf_heap_tuple_dealloc && tp->tp_base == &PyTuple_Type
            && (tp->tp_flags & Py_TPFLAGS_HEAPTYPE) && tp->tp_finalize == NULL && tp->tp_del == NULL) {
        tp->tp_dealloc = pf_row_dealloc;
    }
    return 0;
}

static pf_row_api pf_rows = {pf_alloc_row_owned, pf_adopt_row_class};

static PyObject *pf_rows_capsule(void) {
    return PyCapsule_New(&pf_rows, PF_ROWS_CAPSULE, NULL);
}

/* Rows of each length now on the free list (for tests). */
static PyObject *pf_free_list_counts(void) {
    Py_ssize_t n;
    PyObject *out = PyList_New(PF_FREE_LIST_LENGTHS);
    if (out == NULL) return NULL;
    for (n = 0; n < PF_FREE_LIST_LENGTHS; n++) {
        PyObject *c = PyLong_FromLong(pf_free_count[n]);
        if (c == NULL) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, n, c);
    }
    return out;
}

#define pf_alloc_row pf_alloc_row_owned

#else  /* a module using the owner's free list */

static pf_row_api *pf_rows_api = NULL;

/* At module import: 0, or -1 with an exception set. */
static int pf_import_rows(void) {
    pf_rows_api = (pf_row_api *)PyCapsule_Import(PF_ROWS_CAPSULE, 0);
    return pf_rows_api == NULL ? -1 : 0;
}

#define pf_alloc_row(cls, n) (pf_rows_api->alloc((cls), (n)))
#define pf_adopt_row_class(cls) (pf_rows_api->adopt(cls))

#endif

/* Track a filled row, unless none of its items can be part of a reference
 * cycle (str, int, None, floats, untracked exact tuples...): the rule CPython's
 * collector applies to tuples, applied at once, so collections triggered while
 * thousands of rows are built do not have to walk them. */
static inline int pf_row_needs_tracking(PyObject *row, Py_ssize_t n) {
    Py_ssize_t i;
    for (i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(row, i);
        if (PyObject_IS_GC(item) && (!PyTuple_CheckExact(item) || PyObject_GC_IsTracked(item))) return 1;
    }
    return 0;
}

static inline void pf_track_row(PyObject *row, Py_ssize_t n) {
    if (pf_row_needs_tracking(row, n)) PyObject_GC_Track(row);
}

/* A new row of class `cls` holding the items of `values` (a list or tuple, checked by the caller). */
static inline PyObject *pf_new_tuple_row(PyObject *cls, PyObject *values) {
    Py_ssize_t i, n = PySequence_Fast_GET_SIZE(values);
    PyObject **src;
    PyObject *row = pf_alloc_row(cls, n);
    if (row == NULL) return NULL;
    /* The allocation may run a garbage collection, and with it finalizers that
       could resize a list row: read its items only now, and only if it still fits. */
    src = PySequence_Fast_ITEMS(values);
    if (PySequence_Fast_GET_SIZE(values) != n) {
        for (i = 0; i < n; i++) PyTuple_SET_ITEM(row, i, NULL);  /* an empty row frees cleanly */
        Py_DECREF(row);
        PyErr_SetString(PyExc_RuntimeError, "a row changed size while it was being copied");
        return NULL;
    }
    for (i = 0; i < n; i++) {
        Py_INCREF(src[i]);
        PyTuple_SET_ITEM(row, i, src[i]);
    }
    pf_track_row(row, n);
    return row;
}

/* A new row of class `cls` taking over the `n` references in `items` (which are cleared). */
static inline PyObject *pf_tuple_row_from_owned(PyObject *cls, PyObject **items, Py_ssize_t n) {
    Py_ssize_t i;
    PyObject *row = pf_alloc_row(cls, n);
    if (row == NULL) return NULL;
    for (i = 0; i < n; i++) {
        PyTuple_SET_ITEM(row, i, items[i]);
        items[i] = NULL;
    }
    pf_track_row(row, n);
    return row;
}

/* A plain tuple taking over the `n` references in `items` (which are cleared): one
 * allocation, from CPython's own tuple free list. PyTuple_New tracks the tuple; it is
 * untracked again at once when nothing in it can be part of a cycle (pf_track_row's rule). */
static inline PyObject *pf_plain_tuple_from_owned(PyObject **items, Py_ssize_t n) {
    Py_ssize_t i;
    PyObject *row = PyTuple_New(n);
    if (row == NULL) return NULL;
    for (i = 0; i < n; i++) {
        PyTuple_SET_ITEM(row, i, items[i]);
        items[i] = NULL;
    }
    if (n > 0 && PyObject_GC_IsTracked(row) && !pf_row_needs_tracking(row, n)) PyObject_GC_UnTrack(row);
    return row;
}

/* Dict rows. A row starts as a copy of a template dict (the column names, each
 * mapped to None): copying a small dict clones its key table in one go. Then
 * each value is stored. On CPython 3.11 the store goes straight into the
 * copy's entry for that column (entry i holds column i when the names are
 * distinct str, checked for every row by the identity of each entry's key);
 * elsewhere, and for anything unusual (repeated names, str subclasses), it is
 * PyDict_SetItem, which finds each slot by the key's cached hash. The copy is
 * brand new and not yet visible to anyone, so nothing can observe a value
 * stored without the dict's own bookkeeping (its version tag only matters to
 * caches that have seen the dict). */
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && !defined(Py_GIL_DISABLED) \
    && !defined(PF_NO_DICT_ENTRIES)
#define PF_DICT_ENTRIES 1
#ifndef Py_BUILD_CORE
#define Py_BUILD_CORE 1
#define PF_UNDEF_BUILD_CORE
#endif
#include "internal/pycore_dict.h"
#ifdef PF_UNDEF_BUILD_CORE
#undef Py_BUILD_CORE
#undef PF_UNDEF_BUILD_CORE
#endif
#else
#define PF_DICT_ENTRIES 0
#endif

/* Stores items[i] under key i of `keys` into `row` (a fresh copy of the template);
 * returns `row`, or NULL with `row` released. The references stay the caller's. */
static PyObject *pf_fill_dict_row(PyObject *row, PyObject *keys, PyObject **items, Py_ssize_t n) {
    Py_ssize_t i = 0;
#if PF_DICT_ENTRIES
    PyDictObject *mp = (PyDictObject *)row;
    if (mp->ma_values == NULL && mp->ma_keys->dk_kind == DICT_KEYS_UNICODE && mp->ma_keys->dk_nentries == n) {
        PyDictUnicodeEntry *ep = DK_UNICODE_ENTRIES(mp->ma_keys);
        int track = 0;
        for (; i < n; i++) {
            PyObject *old, *value = items[i];
            if (ep[i].me_key != PyTuple_GET_ITEM(keys, i)) break;  /* not the layout expected: SetItem */
            old = ep[i].me_value;
            Py_INCREF(value);
            ep[i].me_value = value;
            Py_XDECREF(old);
            track |= PyObject_IS_GC(value) && (!PyTuple_CheckExact(value) || PyObject_GC_IsTracked(value));
        }
        if (track && !PyObject_GC_IsTracked(row)) PyObject_GC_Track(row);  /* the dict's own rule */
    }
#endif
    for (; i < n; i++) {
        if (PyDict_SetItem(row, PyTuple_GET_ITEM(keys, i), items[i]) < 0) {
            Py_DECREF(row);
            return NULL;
        }
    }
    return row;
}

/* A copy of `template` (a dict whose keys are `keys`) with key i set to items[i].
 * Copying a small dict clones its key table in one go, and each store then finds
 * its slot by the key's cached hash and identity. */
static inline PyObject *pf_dict_row_from_items(PyObject *template, PyObject *keys, PyObject **items, Py_ssize_t n) {
    PyObject *row = PyDict_Copy(template);
    return row == NULL ? NULL : pf_fill_dict_row(row, keys, items, n);
}

/* The same from a list or tuple of values (checked by the caller). */
static inline PyObject *pf_new_dict_row(PyObject *template, PyObject *keys, PyObject *values) {
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    PyObject *row = PyDict_Copy(template);
    if (row == NULL) return NULL;
    /* see pf_new_tuple_row: the copy may have run finalizers */
    if (PySequence_Fast_GET_SIZE(values) != n) {
        Py_DECREF(row);
        PyErr_SetString(PyExc_RuntimeError, "a row changed size while it was being copied");
        return NULL;
    }
    return pf_fill_dict_row(row, keys, PySequence_Fast_ITEMS(values), n);
}

#endif  /* PF_ROWS_H */
