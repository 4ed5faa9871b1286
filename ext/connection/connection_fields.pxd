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


# One attribute read (or store) as Python does it: from (into) the field while ``conn``'s attributes are its
# fields, asked again at every read (Python code run since may have changed the class); the value read is a
# reference of the caller's own.

cdef inline object get_is_defunct(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.is_defunct if fields is not None else conn.is_defunct

cdef inline object get_is_closed(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.is_closed if fields is not None else conn.is_closed

cdef inline object get_socket_writable(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields._socket_writable if fields is not None else conn._socket_writable

cdef inline object get_requests(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields._requests if fields is not None else conn._requests

cdef inline object get_protocol_version(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.protocol_version if fields is not None else conn.protocol_version

cdef inline object get_compressor(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.compressor if fields is not None else conn.compressor

cdef inline object get_decompressor(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.decompressor if fields is not None else conn.decompressor

cdef inline object get_allow_beta_protocol_version(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.allow_beta_protocol_version if fields is not None else conn.allow_beta_protocol_version

cdef inline object get_is_checksumming_enabled(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields._is_checksumming_enabled if fields is not None else conn._is_checksumming_enabled

cdef inline object get_lock(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.lock if fields is not None else conn.lock

cdef inline object get_in_flight(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.in_flight if fields is not None else conn.in_flight

cdef inline object get_max_request_id(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.max_request_id if fields is not None else conn.max_request_id

cdef inline object get_request_ids(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.request_ids if fields is not None else conn.request_ids

cdef inline object get_highest_request_id(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.highest_request_id if fields is not None else conn.highest_request_id

cdef inline object get_orphaned_request_ids(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.orphaned_request_ids if fields is not None else conn.orphaned_request_ids

cdef inline object get_orphaned_threshold_reached(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.orphaned_threshold_reached if fields is not None else conn.orphaned_threshold_reached

cdef inline object get_continuous_paging_sessions(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields._continuous_paging_sessions if fields is not None else conn._continuous_paging_sessions

cdef inline object get_msg_received(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.msg_received if fields is not None else conn.msg_received

cdef inline object get_user_type_map(conn):
    cdef ConnectionFields fields = plain_fields(conn)
    return fields.user_type_map if fields is not None else conn.user_type_map

cdef inline int set_in_flight(conn, value) except -1:
    cdef ConnectionFields fields = plain_fields(conn)
    if fields is not None:
        fields.in_flight = value
    else:
        conn.in_flight = value
    return 0

cdef inline int set_msg_received(conn, value) except -1:
    cdef ConnectionFields fields = plain_fields(conn)
    if fields is not None:
        fields.msg_received = value
    else:
        conn.msg_received = value
    return 0

cdef inline int set_highest_request_id(conn, value) except -1:
    cdef ConnectionFields fields = plain_fields(conn)
    if fields is not None:
        fields.highest_request_id = value
    else:
        conn.highest_request_id = value
    return 0
