# Typed rows, compiled: class_row, kwargs_row, args_row (included by _speedups.pyx).
#
# pyfactories._classrows is the specification: it reads the class, works out
# a plan per column list (which value goes to which keyword) and raises the
# errors; both implementations share it. What is compiled is the building of
# the rows: one vectorcall per row with the keyword names of the plan and the
# values taken from the decoded row by position (no dict per row), or, for a
# plain slotted dataclass whose every field has a column, a direct slot fill
# (typed_rows.h): the instance is allocated as object.__new__ allocates it and
# each value is stored in its slot, which is all its generated __init__ does.

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.ref cimport PyObject

from typed_rows cimport pf_fill_slots, pf_plain_instances, pf_slot_offset, pf_type_version

from pyfactories._classrows import (
    ColumnMismatch,
    FactoryRegistry,
    PLAN_CACHE_SIZE,
    args_plan,
    check_callable,
    check_extra,
    class_plan,
    class_spec,
    describe_factory,
    direct_fill_fields,
    kwargs_plan,
)

cdef extern from "Python.h":
    object PyObject_Vectorcall(object callable, PyObject **args, size_t nargsf, PyObject *kwnames)
    size_t PY_VECTORCALL_ARGUMENTS_OFFSET
    PyObject *PyFunction_GET_CODE(PyObject *func)
    PyObject **PySequence_Fast_ITEMS(object seq)


cdef class _CompiledPlan:
    """A plan of ``pyfactories._classrows`` with its positions in a C array, and the direct fill if any."""

    cdef readonly object plan
    cdef Py_ssize_t ncols, nargs
    cdef Py_ssize_t *positions
    cdef object kwnames  # a tuple, or None: the whole row positionally
    # The direct fill: slot offsets in plan order (NULL: always the constructor), and what it was
    # checked against: the class's version tag and its __init__'s code (both change when they are replaced).
    cdef Py_ssize_t *offsets
    cdef unsigned int version
    cdef object init, code

    def __cinit__(self, plan):
        cdef Py_ssize_t k
        self.plan = plan
        self.ncols = plan.ncols
        self.kwnames = plan.kwnames
        self.nargs = len(plan.positions)
        self.positions = <Py_ssize_t *>PyMem_Malloc((self.nargs + 1) * sizeof(Py_ssize_t))
        if self.positions == NULL:
            raise MemoryError()
        for k in range(self.nargs):
            self.positions[k] = plan.positions[k]

    def __dealloc__(self):
        PyMem_Free(self.positions)
        PyMem_Free(self.offsets)

    cdef int prepare_direct_fill(self, cls) except -1:
        """Enable the direct fill when the class allows it (checked in Python, offsets read in C)."""
        cdef Py_ssize_t k
        names = direct_fill_fields(cls, self.plan)
        if names is None or not pf_plain_instances(cls):
            return 0
        offsets = [pf_slot_offset(cls, cls.__dict__[name]) for name in names]
        init = cls.__dict__["__init__"]
        version = pf_type_version(cls)  # the lookups above gave the class a version tag if it can have one
        if version == 0:
            return 0
        self.offsets = <Py_ssize_t *>PyMem_Malloc((self.nargs + 1) * sizeof(Py_ssize_t))
        if self.offsets == NULL:
            raise MemoryError()
        for k in range(self.nargs):
            self.offsets[k] = offsets[k]
        self.init, self.code, self.version = init, init.__code__, version
        return 0

    cdef bint direct_fill_holds(self, cls) except -1:
        """Whether the direct fill still builds what the constructor builds (rechecked when the class changed)."""
        if self.offsets == NULL:
            return False
        if pf_type_version(cls) == self.version and <object>PyFunction_GET_CODE(<PyObject *>self.init) is self.code:
            return True
        # The class (or its __init__'s code) changed since the check: check again; if the
        # answer or a slot moved, the constructor from now on.
        names = direct_fill_fields(cls, self.plan)
        init = cls.__dict__.get("__init__")
        if (names is not None and pf_plain_instances(cls) and init is self.init and init.__code__ is self.code
                and [pf_slot_offset(cls, cls.__dict__[name]) for name in names]
                == [self.offsets[k] for k in range(self.nargs)]):
            self.version = pf_type_version(cls)
            if self.version != 0:
                return True
        PyMem_Free(self.offsets)
        self.offsets = NULL
        return False


cdef class TypedRowFactory:
    """A row factory building typed rows; made by ``class_row``, ``kwargs_row`` or ``args_row``."""

    cdef readonly str kind
    cdef object _target, _extra, _spec
    cdef ColumnSetCache _plans

    __pyfactories_factory__ = True

    def __init__(self, kind, target, extra, spec):
        self.kind = kind
        self._target = target
        self._extra = extra
        self._spec = spec
        self._plans = ColumnSetCache(self._plan, PLAN_CACHE_SIZE)

    def _plan(self, tuple key):
        if self.kind == "class":
            compiled = _CompiledPlan(class_plan(self._target, self._spec, self._extra, key))
            compiled.prepare_direct_fill(self._target)
            return compiled
        return _CompiledPlan(kwargs_plan(key) if self.kind == "kwargs" else args_plan(key))

    @property
    def cls(self):
        if self.kind != "class":
            raise AttributeError(f"a {self.kind}_row factory has no 'cls' (it calls .func)")
        return self._target

    @property
    def extra(self):
        if self.kind != "class":
            raise AttributeError(f"a {self.kind}_row factory has no 'extra'")
        return self._extra

    @property
    def func(self):
        if self.kind == "class":
            raise AttributeError("a class_row factory has no 'func' (it calls .cls)")
        return self._target

    def __call__(self, colnames, rows):
        cdef _CompiledPlan plan = self._plans.get(colnames)
        cdef Py_ssize_t i, k, n = _row_count(rows), nargs = plan.nargs
        for i in range(n):  # every row is checked before any is built, as in the pure-Python twin
            _checked_row(rows, i, plan.ncols)
        target = self._target
        cdef list out = PyList_New(n)
        cdef PyObject **items
        cdef PyObject **args = <PyObject **>PyMem_Malloc((nargs + 1) * sizeof(PyObject *))
        if args == NULL:
            raise MemoryError()
        cdef bint direct = plan.offsets != NULL and plan.direct_fill_holds(target)
        # class and kwargs rows: every value by keyword (no keyword at all: NULL); args rows: positionally
        cdef PyObject *kwnames = <PyObject *>plan.kwnames if plan.kwnames else NULL
        cdef size_t nargsf = (0 if plan.kwnames is not None else nargs) | PY_VECTORCALL_ARGUMENTS_OFFSET
        try:
            for i in range(n):
                # A tuple's items cannot change while the call runs; a list row is copied first.
                row = rows[i]
                if not PyTuple_Check(row):
                    row = tuple(row)
                    if len(row) != plan.ncols:  # changed since it was checked
                        _checked_row(rows, i, plan.ncols)
                items = PySequence_Fast_ITEMS(row)
                if direct and pf_type_version(target) == plan.version:
                    obj = pf_fill_slots(target, items, plan.positions, plan.offsets, nargs)
                else:
                    for k in range(nargs):
                        args[k + 1] = items[plan.positions[k]]
                    obj = PyObject_Vectorcall(target, args + 1, nargsf, kwnames)
                Py_INCREF(obj)
                PyList_SET_ITEM(out, i, obj)
        finally:
            PyMem_Free(args)
        return out

    def _fills_slots(self, colnames):
        """Whether rows of ``colnames`` are built by the direct slot fill now (for tests)."""
        cdef _CompiledPlan plan = self._plans.get(colnames)
        return plan.direct_fill_holds(self._target)

    def cache_info(self):
        """Hits, misses and size of this factory's column-list cache."""
        return self._plans.info()

    def cache_clear(self):
        self._plans.clear()

    def __repr__(self):
        return describe_factory(self.kind, self._target, self._extra)


_factories = FactoryRegistry()


def class_row(cls, *, extra="error"):
    """A row factory building ``cls(field=value, ...)`` per row (see ``pyfactories._classrows``)."""
    checked = check_extra(extra)
    spec = class_spec(cls)
    return _factories.get("class", cls, checked, lambda: TypedRowFactory("class", cls, checked, spec))


def kwargs_row(func):
    """A row factory building ``func(**row)`` per row, keyed by the column names."""
    check_callable(func, "kwargs_row")
    return _factories.get("kwargs", func, "", lambda: TypedRowFactory("kwargs", func, "", None))


def args_row(func):
    """A row factory building ``func(*row)`` per row."""
    check_callable(func, "args_row")
    return _factories.get("args", func, "", lambda: TypedRowFactory("args", func, "", None))
