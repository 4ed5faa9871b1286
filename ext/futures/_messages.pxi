# Included by _futures.pyx: the request's message (pyfactories.futures._futures_py's execute_message and
# query_message).

# The driver's messages, built as their __init__ builds them (the same attributes set in the same order)
# without the class call, keyword arguments and super() calls, where that __init__ was found at import to
# lay a message out in one of the ways the driver lines do (probed with distinct values); by the class
# itself otherwise, and after its __init__ was replaced.
from pyfactories.futures._scylla_py import TABLET_VERSIONS as _BLOCK_ARGUMENT

cdef object _new_object = object.__new__
# the three __init__ a message's class call runs (a subclass's, then _QueryMessage's through super()), as
# imported: a wrapper put in the driver's place before, or any of them replaced after, is called
cdef tuple _INITS = _steps(((ExecuteMessage, "__init__"), (QueryMessage, "__init__"),
                            (ExecuteMessage.__mro__[1], "__init__")))
cdef bint _INITS_OWN = all(len(step) == 3 and _drivers_own(step[2]) is step[2] for step in _INITS[1:])
#: how a line's messages end: with continuous paging options (cassandra-driver) or not (scylla-driver)
cdef enum Layout:
    NOT_KNOWN, WITH_PAGING_OPTIONS, WITHOUT_PAGING_OPTIONS, WITH_TABLET_BLOCK


cdef list _query_fields(list v, list ending):
    return [("query_params", v[1]), ("consistency_level", v[2]), ("serial_consistency_level", v[3]),
            ("fetch_size", v[4]), ("paging_state", v[5]), ("timestamp", v[6]), ("skip_meta", v[7])] + ending


cdef Layout _execute_layout():
    """How ``ExecuteMessage.__init__`` lays out a message, asked once with values nothing else holds."""
    v = [object() for _ in range(10)]
    extra = {"tablet_version_block": v[9]} if _BLOCK_ARGUMENT else {}
    try:
        made = list(vars(ExecuteMessage(*v[:7], skip_meta=v[7], continuous_paging_options=None,
                                        result_metadata_id=v[8], **extra)).items())
    except Exception:
        return NOT_KNOWN
    head = [("query_id", v[0]), ("result_metadata_id", v[8])]
    if made == head + _query_fields(v, [("continuous_paging_options", None), ("keyspace", None)]):
        return WITH_PAGING_OPTIONS
    if made == head + _query_fields(v, [("keyspace", None)]):
        return WITHOUT_PAGING_OPTIONS
    if _BLOCK_ARGUMENT and made == head + [("tablet_version_block", v[9])] + _query_fields(v, [("keyspace", None)]):
        return WITH_TABLET_BLOCK
    return NOT_KNOWN


cdef Layout _query_layout():
    """How ``QueryMessage.__init__`` lays out a message, asked as :func:`_execute_layout` asks."""
    v = [object() for _ in range(10)]
    try:
        made = list(vars(QueryMessage(v[0], *v[2:7], None, v[8])).items())
    except Exception:
        return NOT_KNOWN
    v[1], v[7] = None, False
    if made == [("query", v[0])] + _query_fields(v, [("continuous_paging_options", None), ("keyspace", v[8])]):
        return WITH_PAGING_OPTIONS
    if made == [("query", v[0])] + _query_fields(v, [("keyspace", v[8])]):
        return WITHOUT_PAGING_OPTIONS
    return NOT_KNOWN


cdef Layout _EXECUTE_LAYOUT = _execute_layout() if _INITS_OWN else NOT_KNOWN
cdef Layout _QUERY_LAYOUT = _query_layout() if _INITS_OWN else NOT_KNOWN
#: whether both messages are built here without their class call (False: a driver whose messages this
#: module does not know, every message then made by its class)
MESSAGES_LAID_OUT = _EXECUTE_LAYOUT != NOT_KNOWN and _QUERY_LAYOUT != NOT_KNOWN


cdef object _query_params(msg, query_params, consistency_level, serial_consistency_level, fetch_size, paging_state,
                          timestamp, skip_meta, keyspace, bint paging_options):
    msg.query_params = query_params
    msg.consistency_level = consistency_level
    msg.serial_consistency_level = serial_consistency_level
    msg.fetch_size = fetch_size
    msg.paging_state = paging_state
    msg.timestamp = timestamp
    msg.skip_meta = skip_meta
    if paging_options:
        msg.continuous_paging_options = None
    msg.keyspace = keyspace
    return msg


cdef object _execute_message(query_id, query_params, consistency_level, serial_consistency_level, fetch_size,
                             paging_state, timestamp, skip_meta, result_metadata_id, tablet_version_block=None):
    if _EXECUTE_LAYOUT == NOT_KNOWN or not _unchanged(_INITS):
        extra = {"tablet_version_block": tablet_version_block} if _BLOCK_ARGUMENT else {}
        return ExecuteMessage(query_id, query_params, consistency_level, serial_consistency_level, fetch_size,
                              paging_state, timestamp, skip_meta=skip_meta, continuous_paging_options=None,
                              result_metadata_id=result_metadata_id, **extra)
    msg = _new_object(ExecuteMessage)
    msg.query_id = query_id
    msg.result_metadata_id = result_metadata_id
    if _EXECUTE_LAYOUT == WITH_TABLET_BLOCK:
        msg.tablet_version_block = tablet_version_block
    return _query_params(msg, query_params, consistency_level, serial_consistency_level, fetch_size, paging_state,
                         timestamp, skip_meta, None, _EXECUTE_LAYOUT == WITH_PAGING_OPTIONS)


cdef object _query_message(query, consistency_level, serial_consistency_level, fetch_size, paging_state, timestamp,
                           keyspace):
    if _QUERY_LAYOUT == NOT_KNOWN or not _unchanged(_INITS):
        return QueryMessage(query, consistency_level, serial_consistency_level, fetch_size, paging_state, timestamp,
                            None, keyspace)
    msg = _new_object(QueryMessage)
    msg.query = query
    return _query_params(msg, None, consistency_level, serial_consistency_level, fetch_size, paging_state, timestamp,
                         False, keyspace, _QUERY_LAYOUT == WITH_PAGING_OPTIONS)


def execute_message(query_id, query_params, consistency_level, serial_consistency_level, fetch_size, paging_state,
                    timestamp, skip_meta, result_metadata_id):
    """``pyfactories.futures._futures_py.execute_message``."""
    return _execute_message(query_id, query_params, consistency_level, serial_consistency_level, fetch_size,
                            paging_state, timestamp, skip_meta, result_metadata_id)


def query_message(query, consistency_level, serial_consistency_level, fetch_size, paging_state, timestamp, keyspace):
    """``pyfactories.futures._futures_py.query_message``."""
    return _query_message(query, consistency_level, serial_consistency_level, fetch_size, paging_state, timestamp,
                          keyspace)
