/* Row builders shared by _speedups.pyx and _fastpath.pyx.
 *
 * A row is an instance of a namedtuple class (a tuple subclass with the tuple
 * memory layout, checked when the class is cached), filled the way
 * tuple.__new__(cls, values) fills it, minus argument parsing and iteration.
 */
#include <Python.h>

/* A row of class `cls` with room for `n` items, not yet tracked by the garbage
 * collector and with its items unset: the caller fills every item before
 * anything else runs, then calls pf_track_row. Unlike tp_alloc this neither
 * zeroes the items nor tracks the row, as tuple's own allocator does. */
static inline PyObject *pf_alloc_row(PyObject *cls, Py_ssize_t n) {
    return (PyObject *)PyObject_GC_NewVar(PyVarObject, (PyTypeObject *)cls, n);
}

/* Track a filled row, unless none of its items can be part of a reference
 * cycle (str, int, None, floats, untracked exact tuples...): the rule CPython's
 * collector applies to tuples, applied at once, so collections triggered while
 * thousands of rows are built do not have to walk them. */
static inline void pf_track_row(PyObject *row, Py_ssize_t n) {
    Py_ssize_t i;
    for (i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(row, i);
        if (PyObject_IS_GC(item) && (!PyTuple_CheckExact(item) || PyObject_GC_IsTracked(item))) {
            PyObject_GC_Track(row);
            return;
        }
    }
}

/* A new row of class `cls` holding the items of `values` (a list or tuple, checked by the caller). */
static PyObject *pf_new_tuple_row(PyObject *cls, PyObject *values) {
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
static PyObject *pf_tuple_row_from_owned(PyObject *cls, PyObject **items, Py_ssize_t n) {
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

/* Stores items[i] under key i of `keys` into `row` (a fresh copy of the template);
 * returns `row`, or NULL with `row` released. The references stay the caller's. */
static PyObject *pf_fill_dict_row(PyObject *row, PyObject *keys, PyObject **items, Py_ssize_t n) {
    Py_ssize_t i;
    for (i = 0; i < n; i++) {
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
static PyObject *pf_dict_row_from_items(PyObject *template, PyObject *keys, PyObject **items, Py_ssize_t n) {
    PyObject *row = PyDict_Copy(template);
    return row == NULL ? NULL : pf_fill_dict_row(row, keys, items, n);
}

/* The same from a list or tuple of values (checked by the caller). */
static PyObject *pf_new_dict_row(PyObject *template, PyObject *keys, PyObject *values) {
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
