# The fast path's ``decode_message``: included in ``_fastpath.pyx``.

def make_decode_message(RowsDecoder decoder not None, base_decode, message_cls, bint with_features=False):
    """A ``decode_message`` classmethod that decodes plain ROWS results without the generic machinery.

    A frame with no flags (no compression, tracing, warnings or custom payload)
    holding a ROWS result, or a VOID one (an INSERT's answer), becomes a message
    directly; anything else goes
    through the driver's ``decode_message`` (``base_decode``), which still
    reaches ``decoder`` for ROWS through ``recv_results_rows``. ``with_features``:
    the driver's has ``protocol_features`` after ``protocol_version`` (scylla-driver).
    """
    def decode_message(cls, protocol_version, user_type_map, stream_id, flags, opcode, body, decompressor,
                       result_metadata):
        cdef int kind = _plain_result(cls, flags, opcode, body)
        if kind == _RESULT_KIND_ROWS:
            return _rows_message(decoder, message_cls, protocol_version, user_type_map, stream_id, body,
                                 result_metadata)
        if kind == _RESULT_KIND_VOID:
            return _void_message(message_cls, stream_id)
        return _base_decode(base_decode, cls, opcode, (protocol_version, user_type_map, stream_id, flags, opcode,
                                                       body, decompressor, result_metadata))

    def decode_message_with_features(cls, protocol_version, protocol_features, user_type_map, stream_id, flags,
                                     opcode, body, decompressor, result_metadata):
        cdef int kind = _plain_result(cls, flags, opcode, body)
        if kind == _RESULT_KIND_ROWS:
            return _rows_message(decoder, message_cls, protocol_version, user_type_map, stream_id, body,
                                 result_metadata)
        if kind == _RESULT_KIND_VOID:
            return _void_message(message_cls, stream_id)
        return _base_decode(base_decode, cls, opcode, (protocol_version, protocol_features, user_type_map, stream_id,
                                                       flags, opcode, body, decompressor, result_metadata))

    return classmethod(decode_message_with_features if with_features else decode_message)


cdef inline int _plain_result(cls, flags, opcode, body) except -1:
    """``_RESULT_KIND_ROWS`` for a frame without flags whose body is a ROWS result (and no column
    encryption to apply), ``_RESULT_KIND_VOID`` for one whose body is a VOID result and nothing
    more, else 0 (the driver's ``decode_message`` reads it)."""
    cdef const unsigned char *p
    cdef Py_ssize_t size
    # exact ints only: an int subclass's comparisons are Python code, and may not say what the driver sees
    if (type(opcode) is not int or opcode != 0x08 or type(flags) is not int or flags != 0
            or type(body) is not bytes or PyBytes_GET_SIZE(body) < 4 or cls.column_encryption_policy is not None):
        return 0
    p = <const unsigned char *>PyBytes_AS_STRING(body)
    size = PyBytes_GET_SIZE(body)
    if p[0] != 0 or p[1] != 0 or p[2] != 0:
        return 0
    if p[3] == _RESULT_KIND_ROWS:
        return _RESULT_KIND_ROWS
    if p[3] == _RESULT_KIND_VOID and size == 4:
        return _RESULT_KIND_VOID
    return 0


from cpython.object cimport PyTypeObject
from cpython.type cimport PyType_Check

from as_imported cimport found_on as _found_on, steps as _steps, unchanged as _unchanged

cdef extern from *:
    """
    static int pf_reads_as_type(PyObject *meta) {
        return ((PyTypeObject *)meta)->tp_getattro == PyType_Type.tp_getattro;
    }
    """
    bint pf_reads_as_type(object meta)

# type's own and object's own, borrowed (builtin types' dicts never change); only compared
cdef PyObject* _TYPES_NEW = _found_on(type, "__new__")
cdef PyObject* _OBJECTS_NEW = _found_on(object, "__new__")
cdef tuple _NO_ARGS = ()
# (class, its metaclass, the two lookups of __new__ as recorded, whether they found object's and type's):
# the class last made a message of, replaced as one object (a collection while it is made can run Python)
cdef tuple _NEW_OF = (None, None, None, False)


cdef bint _made_as_object(message_cls) except -1:
    """Whether ``message_cls.__new__(message_cls)`` finds ``object.__new__``: a class whose ``__new__`` slot is
    object's and whose bases find object's ``__new__``, whose metaclass reads attributes as ``type`` does and
    has no ``__new__`` of its own in front of it. (A class may keep object's slot and still find another
    ``__new__``: one that names a builtin type's, ``__new__ = int.__new__``.) The two lookups are recorded
    for the class last asked, and looked up again only after a class changed (their version tags)."""
    global _NEW_OF
    cdef tuple known = _NEW_OF
    meta = type(message_cls)
    if not (PyType_Check(message_cls) and (<PyTypeObject*>message_cls).tp_new == (<PyTypeObject*>object).tp_new
            and pf_reads_as_type(meta)):
        return False
    if known[0] is not message_cls or known[1] is not meta:
        recorded = _steps(((message_cls, "__new__"), (meta, "__new__")))
        first, then = <tuple>recorded[1], <tuple>recorded[2]
        known = (message_cls, meta, recorded, len(first) == 3 and <PyObject*>first[2] is _OBJECTS_NEW
                 and len(then) == 3 and <PyObject*>then[2] is _TYPES_NEW)
        _NEW_OF = known
    return known[3] and _unchanged(<tuple>known[2])


cdef object _new_message(message_cls):
    """``message_cls.__new__(message_cls)``. When that finds ``object.__new__`` (:func:`_made_as_object`),
    the slot is called directly, as ``object.__new__`` would call it: the same object, without looking the
    name up and calling through its wrapper."""
    if _made_as_object(message_cls):
        return (<PyTypeObject*>message_cls).tp_new(<type>message_cls, <PyObject*>_NO_ARGS, NULL)
    return message_cls.__new__(message_cls)


cdef _void_message(message_cls, stream_id):
    """The driver's message for a VOID result: its attributes as ``decode_message`` sets them."""
    msg = _new_message(message_cls)
    msg.kind = _RESULT_KIND_VOID
    msg.stream_id = stream_id
    msg.trace_id = None
    msg.custom_payload = None
    msg.warnings = None
    return msg


cdef _rows_message(RowsDecoder decoder, message_cls, protocol_version, user_type_map, stream_id, body,
                   result_metadata):
    msg = _new_message(message_cls)
    msg.kind = _RESULT_KIND_ROWS
    decoder.decode(msg, body, 4, protocol_version, user_type_map, result_metadata, None)
    msg.stream_id = stream_id
    msg.trace_id = None
    msg.custom_payload = None
    msg.warnings = None
    return msg


cdef _base_decode(base_decode, cls, opcode, tuple args):
    """The driver's ``decode_message``; a RESULT it cannot read raises ``MalformedResult`` (a DriverException)."""
    try:
        return base_decode(cls, *args)
    except DriverException:
        raise
    except Exception as exc:
        if opcode != 0x08:
            raise
        raise MalformedResult(f"RESULT body could not be decoded: {exc!r}") from exc
