# The driver's classes as imported: a fast path taken only while what it skips on a class is still what
# the class had at import (``steps`` records it, ``unchanged`` checks it; cimported by the futures and
# the connection). The pure-Python twin: ``pyfactories.futures._plans_py``'s ``_steps`` and ``_unchanged``.

from cpython.object cimport PyObject, PyTypeObject

cdef extern from "Python.h":
    PyObject* _PyType_Lookup(PyTypeObject* type, PyObject* name)  # borrowed; never raises


cdef inline PyObject* found_on(cls, str name):
    """What ``cls.<name>`` finds on the class and its bases, unbound, borrowed; NULL for nothing, and
    for anything but a class (a stand-in put in the driver's place, e.g. by mock.patch)."""
    if not isinstance(cls, type):
        return NULL
    return _PyType_Lookup(<PyTypeObject*>cls, <PyObject*>name)


cdef inline tuple steps(tuple names):
    """For each pair ``(cls, name)``: ``(cls, name, what it finds now)``, or ``(cls, name)`` for nothing."""
    cdef list made = []
    cdef PyObject* found
    for cls, name in names:
        found = found_on(cls, name)
        made.append((cls, name) if found is NULL else (cls, name, <object>found))
    return tuple(made)


cdef inline bint unchanged(tuple recorded) except -1:
    """Whether every class of ``recorded`` is a class and each name finds what it found then."""
    cdef PyObject* found
    cdef tuple step
    for step in recorded:
        if not isinstance(step[0], type):
            return False
        found = found_on(step[0], step[1])
        if len(step) == 2:
            if found is not NULL:
                return False
        elif found is NULL or found is not <PyObject*>step[2]:
            return False
    return True
