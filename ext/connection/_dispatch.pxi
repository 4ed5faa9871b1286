# Dispatch of answers: included in ``_framing.pyx``.

from cassandra.protocol import ProtocolException
from pyfactories.connection._framing_py import DECODE_FEATURES as _DECODE_FEATURES
from pyfactories.connection._framing_py import log as _log
from pyfactories.connection._framing_py import process_msg as _py_process_msg

cdef object _MISSING = object()

_driver_process_msg = Connection.process_msg


def process_msg(self, header, body):
    """The driver's ``Connection.process_msg``: see :func:`pyfactories.connection._framing_py.process_msg`, its
    pure-Python twin, for what is done here and what goes to the driver's own. The read loop of
    this module calls it without a ``_Frame`` when the connection's class has not replaced it.
    A header whose fields are not ``int`` of a frame's range, or a body that is not ``bytes``, is
    the twin's."""
    stream, version, flags, opcode = header.stream, header.version, header.flags, header.opcode
    if (type(stream) is not int or type(version) is not int or type(flags) is not int or type(opcode) is not int
            or type(body) is not bytes or not (-32768 <= stream <= 32767) or not (0 <= version <= 255)
            or not (0 <= flags <= 255) or not (0 <= opcode <= 255)):
        _py_process_msg(self, header, body)
        return
    _dispatch(self, stream, version, flags, opcode, body, header, 0, 0)


cdef bint DECODE_FEATURES = _DECODE_FEATURES


cdef inline bint _ours_dispatch(conn):
    """Whether the frames of ``conn`` go to :func:`_dispatch` directly (its class's ``process_msg``
    is this module's; a subclass that times or replaces it gets its own called)."""
    return getattr(type(conn), "process_msg", None) is _process_msg


cdef int _dispatch(conn, int stream, int version, int flags, int opcode, bytes body, header,
                   Py_ssize_t body_offset, Py_ssize_t end_pos) except -1:
    """``header``: the frame's ``_Frame``, or ``None`` (built from the other arguments when the
    driver's ``process_msg`` or a log message needs one)."""
    if stream < 0 or get_continuous_paging_sessions(conn) or get_orphaned_request_ids(conn):
        _driver_process_msg(conn, _frame(header, version, flags, stream, opcode, body_offset, end_pos), body)
        return 0
    requests = get_requests(conn)
    if type(requests) is not dict:  # replaced by another mapping: the twin's steps
        _py_process_msg(conn, _frame(header, version, flags, stream, opcode, body_offset, end_pos), body)
        return 0
    try:
        entry = (<dict>requests).pop(stream, _MISSING)
        if entry is _MISSING:  # timed out and dropped: the driver's own way (it gives the id back)
            _driver_process_msg(conn, _frame(header, version, flags, stream, opcode, body_offset, end_pos), body)
            return 0
        set_msg_received(conn, True)
        callback, decoder, result_metadata = entry
        try:
            if DECODE_FEATURES:
                response = decoder(version, conn.features, get_user_type_map(conn), stream, flags, opcode, body,
                                   get_decompressor(conn), result_metadata)
            else:
                response = decoder(version, get_user_type_map(conn), stream, flags, opcode, body,
                                   get_decompressor(conn), result_metadata)
        except Exception as exc:
            _log.exception("Error decoding response from Cassandra. %s; buffer: %r",
                           _frame(header, version, flags, stream, opcode, body_offset, end_pos),
                           conn._iobuf.getvalue())
            if callback is not None:
                callback(exc)
            conn.defunct(exc)
            return 0
        _deliver(conn, callback, response)
        _give_back(conn, stream)
    except Exception as exc:  # the driver's process_msg defuncts the connection on any error
        conn.defunct(exc)
    return 0


cdef int _deliver(conn, callback, response) except -1:
    """:func:`pyfactories.connection._framing_py.deliver`."""
    try:
        if _is_instance(response, ProtocolException):
            if "unsupported protocol version" in response.message:
                conn.is_unsupported_proto_version = True
            else:
                _log.error("Closing connection %s due to protocol error: %s", conn, response.summary_msg())
            conn.defunct(response)
        if callback is not None:
            callback(response)
    except Exception:
        _log.exception("Callback handler errored, ignoring:")
    return 0


cdef int _give_back(conn, int stream) except -1:
    """:func:`pyfactories.connection._framing_py.give_back`."""
    sessions = get_continuous_paging_sessions(conn)
    if stream in sessions:
        if sessions[stream].released:
            conn.remove_continuous_paging_session(stream)
        return 0
    lock = get_lock(conn)
    lock.acquire()
    try:
        get_request_ids(conn).append(stream)
    finally:
        lock.release()
    return 0


cdef inline _frame(header, int version, int flags, int stream, int opcode, Py_ssize_t body_offset,
                   Py_ssize_t end_pos):
    return header if header is not None else _Frame(version, flags, stream, opcode, body_offset, end_pos)


_process_msg = process_msg
