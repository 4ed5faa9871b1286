# A connection's fields read without an attribute lookup: pyfactories.connection._fields.ConnectionFields as
# its C layout (connection_fields.h) for the modules that cimport this, and :func:`plain_fields`, which says
# when a connection's attributes are those fields.

from cpython.object cimport PyObject, PyTypeObject

cdef extern from "Python.h":
    PyObject* _PyType_Lookup(PyTypeObject* type, PyObject* name)  # borrowed; never raises

cdef extern from "connection_fields.h":
    ctypedef class pyfactories.connection._fields.ConnectionFields [object PfConnectionFields, check_size error]:
        cdef object is_defunct
        cdef object is_closed
        cdef object _socket_writable
        cdef object _requests
        cdef object protocol_version
        cdef object compressor
        cdef object decompressor
        cdef object allow_beta_protocol_version
        cdef object _is_checksumming_enabled
        cdef object lock
        cdef object in_flight
        cdef object max_request_id
        cdef object request_ids
        cdef object highest_request_id
        cdef object orphaned_request_ids
        cdef object orphaned_threshold_reached
        cdef object _continuous_paging_sessions
        cdef object msg_received
        cdef object user_type_map

    bint pf_fields_cached(object o)
    void pf_fields_remember(object o)
    bint pf_fields_generic(PyTypeObject* cls, PyTypeObject* fields)


cdef inline tuple field_names():
    """The names of the fields, in their order (``pyfactories.connection._fields_py.FIELDS``)."""
    return ("is_defunct", "is_closed", "_socket_writable", "_requests", "protocol_version", "compressor",
            "decompressor", "allow_beta_protocol_version", "_is_checksumming_enabled", "lock", "in_flight",
            "max_request_id", "request_ids", "highest_request_id", "orphaned_request_ids",
            "orphaned_threshold_reached", "_continuous_paging_sessions", "msg_received", "user_type_map")


cdef inline ConnectionFields plain_fields(conn):
    """``conn`` as its fields when each of ``FIELDS`` read or written on it is its field: its class is a
    subclass of ``ConnectionFields`` whose attribute lookup and store are the generic ones and whose every
    field name still finds the field's descriptor (nothing of a subclass in front of it). None otherwise:
    then its attributes are asked as Python asks them. The answer for a class is kept with its version tag
    (dropped by CPython when the class or a base changes), so a class is looked at again only after it
    changed."""
    if pf_fields_cached(conn):
        return <ConnectionFields>conn
    if not isinstance(conn, ConnectionFields):
        return None
    cdef PyTypeObject* cls = (<PyObject*>conn).ob_type
    cdef PyTypeObject* fields = <PyTypeObject*>ConnectionFields
    if not pf_fields_generic(cls, fields):
        return None
    cdef PyObject* own
    for name in field_names():  # no allocation from the first lookup to the tag kept with the answer
        own = _PyType_Lookup(fields, <PyObject*>name)
        if own is NULL or _PyType_Lookup(cls, <PyObject*>name) is not own:
            return None
    pf_fields_remember(conn)
    return <ConnectionFields>conn
