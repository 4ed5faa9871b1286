# The driver's classes as imported: a fast path taken only while what it skips on a class is still what
# the class had at import (``steps`` records it, ``unchanged`` checks it, looking again only after a
# class changed; cimported by the futures and the connection). The pure-Python twin: ``pyfactories.futures._plans_py``'s ``_steps`` and ``_unchanged``.
# ``is_instance`` is ``isinstance`` (the twins call it), answered from the classes where that is what it does.

from cpython.method cimport PyMethod_Check, PyMethod_GET_FUNCTION, PyMethod_GET_SELF
from cpython.object cimport PyObject, PyTypeObject

cdef extern from "Python.h":
    PyObject* _PyType_Lookup(PyTypeObject* type, PyObject* name)  # borrowed; never raises


cdef inline PyObject* found_on(cls, str name):
    """What ``cls.<name>`` finds on the class and its bases, unbound, borrowed; NULL for nothing, and
    for anything but a class (a stand-in put in the driver's place, e.g. by mock.patch)."""
    if not isinstance(cls, type):
        return NULL
    return _PyType_Lookup(<PyTypeObject*>cls, <PyObject*>name)


cdef extern from *:
    """
    static inline unsigned int pf_version_tag(PyObject *cls) { return ((PyTypeObject *)cls)->tp_version_tag; }
    """
    unsigned int pf_version_tag(PyObject* cls)  # what CPython's own method cache keys a class's lookups on


cdef extern from *:
    """
    /* What unchanged() last found true of a record: for each step its class, name and what it found
       (borrowed, only ever compared) and the class's version tag then. Kept in a capsule: out of reach of
       Python code, which can neither read nor write it, nor give one record another's. */
    #define PF_MAX_STEPS 16
    #define PF_TAGS_NAME "pyfactories.recorded_tags"
    typedef struct {
        Py_ssize_t count;  /* 0: nothing recorded yet */
        PyObject *cls[PF_MAX_STEPS], *name[PF_MAX_STEPS], *found[PF_MAX_STEPS];
        unsigned int tag[PF_MAX_STEPS];
    } pf_tags;

    static void pf_tags_free(PyObject *capsule) {
        PyMem_Free(PyCapsule_GetPointer(capsule, PF_TAGS_NAME));
    }

    static PyObject *pf_tags_new(void) {
        pf_tags *tags = (pf_tags *)PyMem_Calloc(1, sizeof(pf_tags));
        PyObject *capsule;
        if (tags == NULL) return PyErr_NoMemory();
        capsule = PyCapsule_New(tags, PF_TAGS_NAME, pf_tags_free);
        if (capsule == NULL) {
            PyMem_Free(tags);
            return NULL;
        }
        if (PyCapsule_SetContext(capsule, tags) < 0) {  /* (read back without comparing names) */
            Py_DECREF(capsule);
            return NULL;
        }
        return capsule;
    }

    /* The tags of a record's first item, made by this module; NULL for anything else (asked by its
       destructor, this module's own function: no name compared per check). */
    static pf_tags *pf_tags_of(PyObject *item) {
        if (!PyCapsule_CheckExact(item) || PyCapsule_GetDestructor(item) != pf_tags_free) return NULL;
        return (pf_tags *)PyCapsule_GetContext(item);
    }

    /* Whether every step of ``recorded`` (its tags first) is the one ``tags`` last found true, its class
       still of the tag it had then: no lookup, no reference taken, nothing that runs Python code. */
    static int pf_tags_hold(const pf_tags *tags, PyObject *recorded) {
        Py_ssize_t i, size, n = PyTuple_GET_SIZE(recorded) - 1;
        PyObject *step, *cls;
        unsigned int tag;
        if (tags->count != n) return 0;
        for (i = 0; i < n; i++) {
            step = PyTuple_GET_ITEM(recorded, i + 1);
            if (!PyTuple_CheckExact(step) || (size = PyTuple_GET_SIZE(step)) < 2 || size > 3) return 0;
            cls = PyTuple_GET_ITEM(step, 0);
            if (cls != tags->cls[i] || PyTuple_GET_ITEM(step, 1) != tags->name[i]
                    || (size == 3 ? PyTuple_GET_ITEM(step, 2) : NULL) != tags->found[i] || !PyType_Check(cls)) {
                return 0;
            }
            tag = pf_version_tag(cls);
            if (tag == 0 || tag != tags->tag[i]) return 0;
        }
        return 1;
    }
    """
    ctypedef struct pf_tags:
        Py_ssize_t count
        PyObject* cls[16]
        PyObject* name[16]
        PyObject* found[16]
        unsigned int tag[16]
    object pf_tags_new()
    pf_tags* pf_tags_of(object item)
    enum: PF_MAX_STEPS
    bint pf_tags_hold(const pf_tags* tags, object recorded)


cdef inline tuple steps(tuple names):
    """``(tags, (cls, name, what it finds now) or (cls, name) for nothing, ...)`` for each pair ``(cls, name)``;
    ``tags``: what :func:`unchanged` last found true of the steps, in a capsule."""
    cdef list made = [pf_tags_new()]
    cdef PyObject* found
    for cls, name in names:
        found = found_on(cls, name)
        made.append((cls, name) if found is NULL else (cls, name, <object>found))
    return tuple(made)


cdef inline bint unchanged(tuple recorded) except -1:
    """Whether every class of ``recorded`` (made by :func:`steps`) is a class and each name finds what it
    found then.

    The classes' version tags are where CPython keeps that answer: a class's tag is dropped (made 0) when
    it or any of its bases changes, and a new one is never one given before. While every step is the one
    last found true (the same class, name and finding) and its class has the tag it had then, nothing is
    looked up again. The full check keeps a step's tag only if the class had that tag, not 0, both before
    and after its lookup (a lookup can run Python code: the ``__eq__`` of a ``str`` subclass used as a key
    of a class's dict, which could change a class meanwhile); each step's entry is written only once the
    step was found true, so each one on its own says what it found while its class kept that tag."""
    cdef PyObject* found
    cdef tuple step
    cdef pf_tags* tags = pf_tags_of(recorded[0])
    cdef Py_ssize_t i, n = len(recorded) - 1
    cdef unsigned int before
    cdef bint kept = tags is not NULL and n <= PF_MAX_STEPS
    if tags is not NULL and pf_tags_hold(tags, recorded):
        return True
    for i in range(n):
        step = <tuple>recorded[i + 1]
        if not isinstance(step[0], type):
            return False
        before = pf_version_tag(<PyObject*>step[0])
        found = found_on(step[0], step[1])
        if len(step) == 2:
            if found is not NULL:
                return False
        elif found is NULL or found is not <PyObject*>step[2]:
            return False
        if kept and before != 0 and before == pf_version_tag(<PyObject*>step[0]):
            tags.cls[i], tags.name[i], tags.found[i] = <PyObject*>step[0], <PyObject*>step[1], found
            tags.tag[i] = before
        else:
            kept = False
    if kept:
        tags.count = n
    return True


cdef inline object drivers_own(fn):
    """``fn`` if it is the driver's own function (defined in its package, not a wrapper put in its place
    before the module asking was imported); otherwise something no lookup finds, so the fast path is never
    taken (the twin: ``pyfactories.futures._plans_py.drivers_own``)."""
    module = getattr(fn, "__module__", None)
    if type(module) is str and module.startswith("cassandra.") and getattr(fn, "__wrapped__", None) is None:
        return fn
    return object()


cdef inline bint is_bound(method, obj, fn) noexcept:
    """Whether ``method`` is ``fn`` bound to ``obj``."""
    return (PyMethod_Check(method) and PyMethod_GET_FUNCTION(method) is <PyObject*>fn
            and PyMethod_GET_SELF(method) is <PyObject*>obj)


cdef inline bint bound_as(obj, str name, fn) except -1:
    """Whether ``obj.<name>`` is the class's ``fn`` bound to ``obj`` (nothing of the object's own in front of
    it). Asked through the generic lookup, which reads an object's attributes without making its
    ``__dict__``: made by two threads at once, CPython 3.11 can free that dict twice."""
    return is_bound(getattr(obj, name, None), obj, fn)


cdef extern from *:
    """
    /* Whether isinstance(obj, cls), for a class cls, is what type's own check answers from the classes:
       cls's metaclass finds type's __instancecheck__ (CPython looks it up on the metaclass, not through
       its __getattribute__), and obj's __class__, where that check reads it, is its type (object's own
       descriptor, read by the generic lookup). 1: an instance, 0: not, -1: ask isinstance, -2: the
       recursion limit, raised as isinstance raises it (it calls the check of a metaclass other than
       type itself inside two recursion guards). */
    static int pf_isinstance_as_type(PyObject *obj, PyObject *cls, PyObject *check_name, PyObject *class_name) {
        int found, guarded;
        if (!PyType_Check(cls)) return -1;
        if (Py_IS_TYPE(obj, (PyTypeObject *)cls)) return 1;
        if (_PyType_Lookup(Py_TYPE(cls), check_name) != _PyType_Lookup(&PyType_Type, check_name)) return -1;
        guarded = !PyType_CheckExact(cls);
        if (guarded) {
            if (Py_EnterRecursiveCall(" in __instancecheck__")) return -2;
            if (Py_EnterRecursiveCall(" while calling a Python object")) {
                Py_LeaveRecursiveCall();
                return -2;
            }
        }
        if (PyObject_TypeCheck(obj, (PyTypeObject *)cls)) found = 1;
        else if (Py_TYPE(obj)->tp_getattro != PyObject_GenericGetAttr
                 || _PyType_Lookup(Py_TYPE(obj), class_name) != _PyType_Lookup(&PyBaseObject_Type, class_name))
            found = -1;
        else found = 0;
        if (guarded) {
            Py_LeaveRecursiveCall();
            Py_LeaveRecursiveCall();
        }
        return found;
    }
    """
    int pf_isinstance_as_type(object obj, object cls, object check_name, object class_name) except -2


cdef inline bint is_instance(obj, cls) except -1:
    """``isinstance(obj, cls)``. Where ``cls``'s metaclass checks instances as ``type`` does (the driver's
    message classes have metaclasses of their own), answered from the classes as that check answers them,
    without looking its method up and calling it; otherwise asked of ``isinstance``."""
    cdef int found = pf_isinstance_as_type(obj, cls, "__instancecheck__", "__class__")
    if found < 0:
        return isinstance(obj, cls)
    return found == 1
