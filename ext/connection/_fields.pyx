# cython: language_level=3
"""A connection's most read attributes as C fields: compiled twin of ``pyfactories.connection._fields_py``
(its docstring is the specification). The modules that read them cimport ``connection_fields.pxd``,
which declares this class's layout from ``connection_fields.h``; this module checks at import that each
field is where the header says."""

from cpython.object cimport PyObject

from cassandra.connection import Connection

from pyfactories.connection._fields_py import FIELDS

cdef extern from "connection_fields.h":
    ctypedef struct _Layout "PfConnectionFields":
        PyObject* is_defunct
        PyObject* is_closed
        PyObject* _socket_writable
        PyObject* _requests
        PyObject* protocol_version
        PyObject* compressor
        PyObject* decompressor
        PyObject* allow_beta_protocol_version
        PyObject* _is_checksumming_enabled
        PyObject* lock
        PyObject* in_flight
        PyObject* max_request_id
        PyObject* request_ids
        PyObject* highest_request_id
        PyObject* orphaned_request_ids
        PyObject* orphaned_threshold_reached
        PyObject* _continuous_paging_sessions
        PyObject* msg_received
        PyObject* user_type_map


cdef class ConnectionFields:
    """``pyfactories.connection._fields_py.ConnectionFields``: each name of ``FIELDS`` a field of the object,
    read and written through its descriptor from Python, and directly by the compiled connection, pool and
    request steps (``plain_fields``)."""

    cdef public object is_defunct, is_closed, _socket_writable, _requests, protocol_version, compressor
    cdef public object decompressor, allow_beta_protocol_version, _is_checksumming_enabled, lock, in_flight
    cdef public object max_request_id, request_ids, highest_request_id, orphaned_request_ids
    cdef public object orphaned_threshold_reached, _continuous_paging_sessions, msg_received, user_type_map

    def __cinit__(self, *args, **kwargs):
        # stored in the fields, not through the class: a subclass's property in front of one is not a setter
        cdef tuple defaults = _DEFAULTS
        self.is_defunct = defaults[0]
        self.is_closed = defaults[1]
        self._socket_writable = defaults[2]
        self._requests = defaults[3]
        self.protocol_version = defaults[4]
        self.compressor = defaults[5]
        self.decompressor = defaults[6]
        self.allow_beta_protocol_version = defaults[7]
        self._is_checksumming_enabled = defaults[8]
        self.lock = defaults[9]
        self.in_flight = defaults[10]
        self.max_request_id = defaults[11]
        self.request_ids = defaults[12]
        self.highest_request_id = defaults[13]
        self.orphaned_request_ids = defaults[14]
        self.orphaned_threshold_reached = defaults[15]
        self._continuous_paging_sessions = defaults[16]
        self.msg_received = defaults[17]
        self.user_type_map = defaults[18]


#: each field's value before it is set: the driver's class attribute as imported, None where it has none
cdef tuple _DEFAULTS = tuple([getattr(Connection, name, None) for name in FIELDS])


cdef bint _laid_out() except -1:
    """Whether every field is where ``connection_fields.h`` puts it (a value of its own set through its
    descriptor, read back from the header's layout)."""
    cdef ConnectionFields made = ConnectionFields.__new__(ConnectionFields)
    cdef _Layout* fields = <_Layout*><PyObject*>made
    values = [object() for _ in FIELDS]
    for name, value in zip(FIELDS, values):
        setattr(made, name, value)
    if fields.is_defunct is not <PyObject*>values[0]:
        return False
    if fields.is_closed is not <PyObject*>values[1]:
        return False
    if fields._socket_writable is not <PyObject*>values[2]:
        return False
    if fields._requests is not <PyObject*>values[3]:
        return False
    if fields.protocol_version is not <PyObject*>values[4]:
        return False
    if fields.compressor is not <PyObject*>values[5]:
        return False
    if fields.decompressor is not <PyObject*>values[6]:
        return False
    if fields.allow_beta_protocol_version is not <PyObject*>values[7]:
        return False
    if fields._is_checksumming_enabled is not <PyObject*>values[8]:
        return False
    if fields.lock is not <PyObject*>values[9]:
        return False
    if fields.in_flight is not <PyObject*>values[10]:
        return False
    if fields.max_request_id is not <PyObject*>values[11]:
        return False
    if fields.request_ids is not <PyObject*>values[12]:
        return False
    if fields.highest_request_id is not <PyObject*>values[13]:
        return False
    if fields.orphaned_request_ids is not <PyObject*>values[14]:
        return False
    if fields.orphaned_threshold_reached is not <PyObject*>values[15]:
        return False
    if fields._continuous_paging_sessions is not <PyObject*>values[16]:
        return False
    if fields.msg_received is not <PyObject*>values[17]:
        return False
    if fields.user_type_map is not <PyObject*>values[18]:
        return False
    return True


if ConnectionFields.__basicsize__ != sizeof(_Layout) or not _laid_out():
    raise ImportError("pyfactories.connection._fields: the fields are not where connection_fields.h says")
