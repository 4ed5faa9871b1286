/* The direct slot fill of class_row (see _typed.pxi), declared for Cython in typed_rows.pxd.
 *
 * An instance of a plain slotted dataclass, built by its generated __init__,
 * is what object.__new__ allocates (tp_alloc: zeroed, tracked by the garbage
 * collector) with each argument stored in its slot by the slot's member
 * descriptor (a new reference at the descriptor's offset). These helpers do
 * the same without the call: the Python side (pyfactories.rows._typed_py.
 * direct_fill_fields) decides when the constructor would do nothing more.
 */
#ifndef PF_TYPED_ROWS_H
#define PF_TYPED_ROWS_H

#include <Python.h>

#if PY_VERSION_HEX < 0x030C0000
#include "structmember.h"
#define PF_T_OBJECT_EX T_OBJECT_EX
#define PF_READONLY READONLY
#else
#define PF_T_OBJECT_EX Py_T_OBJECT_EX
#define PF_READONLY Py_READONLY
#endif

/* Instances made by object.__new__ alone: a heap class directly under object, generic
 * allocation, fixed size, no __dict__, not abstract. */
static int pf_plain_instances(PyObject *cls) {
    PyTypeObject *tp = (PyTypeObject *)cls;
    return PyType_Check(cls) && (tp->tp_flags & Py_TPFLAGS_HEAPTYPE) && tp->tp_base == &PyBaseObject_Type
        && tp->tp_alloc == PyType_GenericAlloc && tp->tp_new == PyBaseObject_Type.tp_new
        && tp->tp_itemsize == 0 && tp->tp_dictoffset == 0 && !(tp->tp_flags & Py_TPFLAGS_IS_ABSTRACT)
#ifdef Py_TPFLAGS_MANAGED_DICT
        && !(tp->tp_flags & Py_TPFLAGS_MANAGED_DICT)
#endif
        ;
}

/* Where the slot that `descr` (a member descriptor of `cls` itself) stores its object, or -1 (TypeError). */
static Py_ssize_t pf_slot_offset(PyObject *cls, PyObject *descr) {
    PyTypeObject *tp = (PyTypeObject *)cls;
    PyMemberDef *m;
    if (!PyType_Check(cls) || Py_TYPE(descr) != &PyMemberDescr_Type || PyDescr_TYPE(descr) != tp) goto refuse;
    m = ((PyMemberDescrObject *)descr)->d_member;
    if (m->type != PF_T_OBJECT_EX || (m->flags & PF_READONLY)
#ifdef Py_RELATIVE_OFFSET
            || (m->flags & Py_RELATIVE_OFFSET)
#endif
            || m->offset < (Py_ssize_t)sizeof(PyObject)
            || m->offset % (Py_ssize_t)sizeof(PyObject *) != 0
            || m->offset + (Py_ssize_t)sizeof(PyObject *) > tp->tp_basicsize) goto refuse;
    return m->offset;
refuse:
    PyErr_Format(PyExc_TypeError, "%R is not a slot of %R that can be filled directly", descr, cls);
    return -1;
}

/* The class's attribute-cache version tag: CPython gives it a new one whenever the class (or
 * anything in its MRO) is modified. 0 when none is assigned, or where the tag cannot be relied on. */
static unsigned int pf_type_version(PyObject *cls) {
#if defined(Py_GIL_DISABLED)
    (void)cls;
    return 0;
#else
    PyTypeObject *tp = (PyTypeObject *)cls;
#if PY_VERSION_HEX < 0x030C0000
    /* up to 3.11 a tag is valid with this flag; from 3.12 (where the flag is left unused) when not 0 */
    if (!(tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG)) return 0;
#endif
    return tp->tp_version_tag;
#endif
}

/* A new instance of `cls` (pf_plain_instances) whose slot at offsets[k] holds a new reference
 * to items[positions[k]], for k < n. Nothing runs between the allocation and the stores. The
 * offsets are distinct (checked with the plan); a slot found set anyway is released, as the
 * member descriptor would release it, so no reference is ever lost. */
static PyObject *pf_fill_slots(PyObject *cls, PyObject *const *items, const Py_ssize_t *positions,
                               const Py_ssize_t *offsets, Py_ssize_t n) {
    PyTypeObject *tp = (PyTypeObject *)cls;
    Py_ssize_t k;
    PyObject *obj = tp->tp_alloc(tp, 0);
    if (obj == NULL) return NULL;
    for (k = 0; k < n; k++) {
        PyObject *value = items[positions[k]];
        PyObject **slot = (PyObject **)((char *)obj + offsets[k]);
        PyObject *old = *slot;
        Py_INCREF(value);
        *slot = value;
        Py_XDECREF(old);
    }
    return obj;
}

/* The init call: whether `cls(...)` is exactly object.__new__(cls) followed by the __init__ its MRO
 * holds, looked up and called as a method (type.__call__ with slot_tp_init). Then the rows can call
 * that __init__ themselves, by vectorcall with the keyword names (no kwargs dict per row). `probe`
 * is a class with an __init__ written in Python: its tp_init is that slot function. */
static int pf_init_call_applies(PyObject *cls, PyObject *probe) {
    PyTypeObject *tp = (PyTypeObject *)cls;
    return PyType_Check(cls) && Py_IS_TYPE(cls, &PyType_Type) && PyType_Check(probe)
        && tp->tp_new == PyBaseObject_Type.tp_new && tp->tp_init == ((PyTypeObject *)probe)->tp_init;
}

/* object.__new__(cls) as type.__call__ would call it (no arguments reach object_new here). */
static PyObject *pf_new_object(PyObject *cls, PyObject *empty_tuple) {
    PyTypeObject *tp = (PyTypeObject *)cls;
    return tp->tp_new(tp, empty_tuple, NULL);
}

#endif  /* PF_TYPED_ROWS_H */
