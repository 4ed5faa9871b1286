# The direct slot fill of class_row (typed_rows.h), for _typed.pxi.

from cpython.ref cimport PyObject

cdef extern from "typed_rows.h":
    bint pf_plain_instances(object cls)
    Py_ssize_t pf_slot_offset(object cls, object descr) except -1
    unsigned int pf_type_version(object cls)
    object pf_fill_slots(object cls, PyObject **items, Py_ssize_t *positions, Py_ssize_t *offsets, Py_ssize_t n)
    bint pf_init_call_applies(object cls, object probe)
    object pf_new_object(object cls, object empty_tuple)
