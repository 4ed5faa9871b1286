# The row builders of rows.h, for the compiled modules (`from rows cimport ...`).
#
# One module owns the row free list: pyfactories.rows._rows, which defines
# PF_ROWS_OWNER before this is cimported (so before rows.h is included) and
# alone has pf_rows_capsule and pf_free_list_counts. Any other module calls
# pf_import_rows at import, then allocates and frees through the owner's lists.

from cpython.ref cimport PyObject

cdef extern from "rows.h":
    # the owner (_rows) only
    object pf_rows_capsule()
    object pf_free_list_counts()
    # the other modules only
    int pf_import_rows() except -1
    # every module
    int pf_adopt_row_class(object cls) except -1
    object pf_new_tuple_row(object cls, object values)
    object pf_new_dict_row(object template, object keys, object values)
    object pf_tuple_row_from_owned(object cls, PyObject **items, Py_ssize_t n)
    object pf_plain_tuple_from_owned(PyObject **items, Py_ssize_t n)
    object pf_dict_row_from_items(object template, tuple keys, PyObject **items, Py_ssize_t n)
