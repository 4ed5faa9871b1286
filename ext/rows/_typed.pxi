# Typed rows, compiled: class_row, kwargs_row, args_row (included by rows/_rows.pyx).
#
# pyfactories.rows._typed_py is the specification: it reads the class (with
# _typed_fields), works out a plan per column list (which value goes to which
# keyword) and raises the errors; both implementations share it. What is
# compiled is the building of the rows, cheapest first:
#   - the direct slot fill (typed_rows.h) for a plain slotted dataclass whose
#     every field has a column: the instance is allocated as object.__new__
#     allocates it and each value stored in its slot, all its __init__ does;
#   - the init call when calling the class is object.__new__ then a Python
#     __init__: both done here, the __init__ by vectorcall with the keyword
#     names (no kwargs dict per row);
#   - otherwise one vectorcall of the class or function per row.
# Both shortcuts are checked again whenever the class's version tag changes.

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.ref cimport PyObject

from typed_rows cimport (
    pf_fill_slots,
    pf_init_call_applies,
    pf_new_object,
    pf_plain_instances,
    pf_slot_offset,
    pf_type_version,
)

from types import FunctionType

from pyfactories.rows._typed_py import (
    ColumnMismatch,
    FactoryRegistry,
    PLAN_CACHE_SIZE,
    args_plan,
    check_callable,
    check_extra,
    class_plan,
    class_spec,
    describe_factory,
    kwargs_plan,
)
from pyfactories.rows._typed_fields import direct_fill_fields, python_init


class _PythonInit:
    """A class with an __init__ written in Python: its tp_init is the slot pf_init_call_applies looks for."""

    def __init__(self):
        pass


# Held here, out of reach of Python code (the module attribute may be rebound).
cdef object _PYTHON_INIT_PROBE = _PythonInit
cdef tuple _KINDS = ("class", "kwargs", "args")


cdef extern from "Python.h":
    object PyObject_Vectorcall(object callable, PyObject **args, size_t nargsf, PyObject *kwnames)
    size_t PY_VECTORCALL_ARGUMENTS_OFFSET
    PyObject *PyFunction_GET_CODE(PyObject *func)
    PyObject **PySequence_Fast_ITEMS(object seq)
    tuple PyList_AsTuple(object lst)
    bint PyType_Check(object o)
    Py_ssize_t PyTuple_GET_SIZE(object o)


@cython.final
@cython.auto_pickle(False)
cdef class _CompiledPlan:
    """A plan of ``pyfactories.rows._typed_py`` with its positions in a C array, and the direct fill if any."""

    cdef readonly object plan
    cdef Py_ssize_t ncols, nargs
    cdef Py_ssize_t *positions
    cdef object kwnames  # a tuple, or None: the whole row positionally
    # The direct fill: on or off, the slot offsets in plan order (kept until the plan goes: a row
    # being filled may still read them), and what it was checked against: the class's version tag
    # and its __init__'s code (both change when they are replaced).
    cdef bint direct
    cdef Py_ssize_t *offsets
    cdef unsigned int version
    cdef object init, code

    def __cinit__(self, plan):
        # The rows index C arrays with what is read here: each part is read from the plan's own storage
        # and checked (exact types, positions within a row, one distinct str name per value).
        cdef Py_ssize_t k, position
        if not PyTuple_Check(plan) or PyTuple_GET_SIZE(plan) != 3:
            raise TypeError(f"a plan must be a pyfactories.rows._typed_py.Plan, not {type(plan).__name__}")
        ncols, positions, kwnames = tuple.__getitem__(plan, 0), tuple.__getitem__(plan, 1), tuple.__getitem__(plan, 2)
        if type(ncols) is not int or type(positions) is not tuple or not (kwnames is None or type(kwnames) is tuple):
            raise TypeError("a plan holds an int, a tuple of positions and a tuple of names (or None)")
        if ncols < 0:
            raise ValueError(f"a plan for {ncols} columns")
        if kwnames is not None and (len(kwnames) != len(positions) or len(set(kwnames)) != len(kwnames)
                                    or any(type(name) is not str for name in kwnames)):
            raise ValueError("a plan's keyword names must be distinct str, one for each position")
        self.plan = plan
        self.ncols = ncols
        self.kwnames = kwnames
        self.nargs = len(positions)
        self.positions = <Py_ssize_t *>PyMem_Malloc((self.nargs + 1) * sizeof(Py_ssize_t))
        if self.positions == NULL:
            raise MemoryError()
        for k in range(self.nargs):
            if type(positions[k]) is not int:
                raise TypeError("a plan's positions must be int")
            position = positions[k]
            if not 0 <= position < self.ncols:
                raise ValueError(f"position {position} is not within a row of {self.ncols} values")
            self.positions[k] = position

    def __dealloc__(self):
        PyMem_Free(self.positions)
        PyMem_Free(self.offsets)

    cdef int prepare_direct_fill(self, cls) except -1:
        """Enable the direct fill when the class allows it (checked in Python, offsets read in C)."""
        cdef Py_ssize_t k
        if not PyType_Check(cls):
            return 0
        getattr(cls, "__init__", None)  # a lookup through the class gives it a version tag if it can have one
        # Read before the checks, compared after them: the checks read the class (a field's name, a
        # slot's name) and may run Python code that changes it; then the constructor.
        version = pf_type_version(cls)
        if version == 0:
            return 0
        offsets = _slot_offsets(cls, self.kwnames)
        if offsets is None or len(offsets) != self.nargs:
            return 0
        init = cls.__dict__.get("__init__")
        if type(init) is not FunctionType or pf_type_version(cls) != version:
            return 0
        self.offsets = <Py_ssize_t *>PyMem_Malloc((self.nargs + 1) * sizeof(Py_ssize_t))
        if self.offsets == NULL:
            raise MemoryError()
        for k in range(self.nargs):
            self.offsets[k] = offsets[k]
        self.init, self.code, self.version = init, init.__code__, version
        self.direct = True
        return 0

    cdef bint direct_fill_holds(self, cls) except -1:
        """Whether the direct fill still builds what the constructor builds (rechecked when the class changed)."""
        if not self.direct:
            return False
        if pf_type_version(cls) == self.version and <object>PyFunction_GET_CODE(<PyObject *>self.init) is self.code:
            return True
        # The class (or its __init__'s code) changed since the check: check again; if the
        # answer or a slot moved, the constructor from now on.
        self.direct = False
        getattr(cls, "__init__", None)
        version = pf_type_version(cls)
        init = cls.__dict__.get("__init__")
        if (version != 0 and init is self.init and init.__code__ is self.code
                and _slot_offsets(cls, self.kwnames) == [self.offsets[k] for k in range(self.nargs)]
                and pf_type_version(cls) == version):
            self.version = version
            self.direct = True
        return self.direct

    cdef inline bint direct_fill_current(self, cls):
        """Per row: still on, the class unchanged and its __init__ running the code checked (pointer compares)."""
        return (self.direct and pf_type_version(cls) == self.version
                and <object>PyFunction_GET_CODE(<PyObject *>self.init) is self.code)


cdef list _slot_offsets(cls, kwnames):
    """The slot offsets of a plan's fields (``kwnames``) when ``cls`` can be filled directly, else None."""
    names = direct_fill_fields(cls, kwnames)
    if type(names) is not tuple:
        return None
    if names is None or not pf_plain_instances(cls):
        return None
    try:
        offsets = [pf_slot_offset(cls, cls.__dict__[name]) for name in names]
    except (TypeError, KeyError):  # not member descriptors of cls after all: the constructor
        return None
    if len(set(offsets)) != len(offsets):  # two fields stored through one slot's descriptor: the constructor
        return None
    return offsets


@cython.final  # no subclass: its rows read the plans this class builds, never ones a subclass returns
@cython.auto_pickle(False)
cdef class TypedRowFactory:
    """A row factory building typed rows; made by ``class_row``, ``kwargs_row`` or ``args_row``."""

    cdef readonly str kind
    cdef object _target, _extra, _spec
    cdef ColumnSetCache _plans
    # The init call (typed_rows.h): the __init__ to call, or None (call the target), and the
    # target's version tag it was found under (0: look again).
    cdef object _init
    cdef unsigned int _init_version

    __pyfactories_factory__ = True

    def __cinit__(self, kind, target, extra, spec):
        # Set once, when the factory is made (calling __init__ again cannot swap the target mid-call).
        if kind not in _KINDS:
            raise ValueError(f"a typed-row factory is one of {_KINDS}, not {kind!r}")
        self.kind = _KINDS[_KINDS.index(kind)]
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

    cdef inline bint _init_current(self):
        """Whether the class is unchanged since its __init__ was looked up (never, without a version tag)."""
        return self._init_version != 0 and pf_type_version(self._target) == self._init_version

    cdef object _python_init(self):
        """The __init__ the rows may call after object.__new__, or None (looked up again when the class changed)."""
        target = self._target
        if not PyType_Check(target):
            return None
        if self._init_current():
            return self._init
        getattr(target, "__init__", None)  # a lookup through the class gives it a version tag if it can have one
        version = pf_type_version(target)
        init = python_init(target) if pf_init_call_applies(target, _PYTHON_INIT_PROBE) else None
        if pf_type_version(target) != version:  # the lookup ran code that changed the class: call it
            init, version = None, 0
        self._init, self._init_version = init, version
        return init

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
        if plan is None:
            raise TypeError("no plan for these columns")
        rows = _rows_of(rows)
        cdef Py_ssize_t i, k, ncols = plan.ncols, nargs = plan.nargs, n = PySequence_Fast_GET_SIZE(rows)
        for i in range(n):  # every row is checked before any is built, as in the pure-Python twin
            _row_values(rows[i], i, ncols)
        target = self._target
        cdef list out = PyList_New(n)
        # NULL slots until built, while constructors (Python code) run: unknown to the collector, whose
        # gc.get_objects() would hand it to them, until it is full (as _out_for's lists)
        PyObject_GC_UnTrack(<void *>out)
        cdef PyObject **items
        cdef tuple values
        # args[0] is free for the callee (PY_VECTORCALL_ARGUMENTS_OFFSET), args[1] holds the instance of the
        # init call, the values follow
        cdef PyObject **args = <PyObject **>PyMem_Malloc((nargs + 2) * sizeof(PyObject *))
        if args == NULL:
            raise MemoryError()
        plan.direct_fill_holds(target)
        # class and kwargs rows: every value by keyword (no keyword at all: NULL); args rows: positionally
        cdef PyObject *kwnames = <PyObject *>plan.kwnames if plan.kwnames else NULL
        cdef size_t npos = 0 if plan.kwnames is not None else nargs
        init = self._python_init()
        try:
            for i in range(n):
                # Checked again: a constructor (Python code) may have changed the rows since (rows[i] is
                # bounds-checked). The values are an exact tuple of ncols items held here while the row is
                # built: a tuple's items cannot change, a list row is copied, a subclass row was copied.
                row = _row_values(rows[i], i, ncols)
                values = row if PyTuple_CheckExact(row) else PyList_AsTuple(row)
                items = PySequence_Fast_ITEMS(values)
                if plan.direct_fill_current(target):  # no Python code runs from here to the row's end
                    obj = pf_fill_slots(target, items, plan.positions, plan.offsets, nargs)
                    Py_INCREF(obj)
                    PyList_SET_ITEM(out, i, obj)
                    continue
                for k in range(nargs):
                    args[k + 2] = items[plan.positions[k]]
                if init is not None and not self._init_current():
                    init = self._python_init()  # the class changed (a constructor may do that)
                if init is None:
                    obj = PyObject_Vectorcall(target, args + 2, npos | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames)
                else:
                    obj = pf_new_object(target, ())
                    args[1] = <PyObject *>obj
                    result = PyObject_Vectorcall(init, args + 1, (npos + 1) | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                                 kwnames)
                    if result is not None:
                        raise TypeError(f"__init__() should return None, not '{type(result).__name__}'")
                Py_INCREF(obj)
                PyList_SET_ITEM(out, i, obj)
        finally:
            PyMem_Free(args)
        PyObject_GC_Track(<void *>out)
        return out

    def _fills_slots(self, colnames):
        """Whether rows of ``colnames`` are built by the direct slot fill now (for tests)."""
        cdef _CompiledPlan plan = self._plans.get(colnames)
        return plan.direct_fill_holds(self._target)

    def _calls_init(self):
        """The __init__ the rows call after object.__new__ now, or None: the target is called (for tests)."""
        return self._python_init()

    def cache_info(self):
        """Hits, misses and size of this factory's column-list cache."""
        return self._plans.info()

    def cache_clear(self):
        self._plans.clear()

    def __repr__(self):
        return describe_factory(self.kind, self._target, self._extra)


_factories = FactoryRegistry()


def class_row(cls, *, extra="error"):
    """A row factory building ``cls(field=value, ...)`` per row (see ``pyfactories.rows._typed_py``)."""
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
