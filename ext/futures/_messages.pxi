# Included by _futures.pyx: the request's message (pyfactories.futures._futures_py's execute_message and
# query_message).

# The driver's messages, built as their __init__ builds them (the same attributes set in the same order)
# without the class call, keyword arguments and super() calls; by the class itself if its __init__ is
# not the one this follows (scylla-driver's, and a replaced one).
cdef object _new_object = object.__new__
cdef object _EXECUTE_INIT = ExecuteMessage.__init__
cdef object _QUERY_INIT = QueryMessage.__init__


cdef object _query_params(msg, query_params, consistency_level, serial_consistency_level, fetch_size, paging_state,
                          timestamp, skip_meta, keyspace):
    msg.query_params = query_params
    msg.consistency_level = consistency_level
    msg.serial_consistency_level = serial_consistency_level
    msg.fetch_size = fetch_size
    msg.paging_state = paging_state
    msg.timestamp = timestamp
    msg.skip_meta = skip_meta
    msg.continuous_paging_options = None
    msg.keyspace = keyspace
    return msg


cdef object _execute_message(query_id, query_params, consistency_level, serial_consistency_level, fetch_size,
                             paging_state, timestamp, skip_meta, result_metadata_id):
    if _SCYLLA or ExecuteMessage.__init__ is not _EXECUTE_INIT:
        return ExecuteMessage(query_id, query_params, consistency_level, serial_consistency_level, fetch_size,
                              paging_state, timestamp, skip_meta=skip_meta, continuous_paging_options=None,
                              result_metadata_id=result_metadata_id)
    msg = _new_object(ExecuteMessage)
    msg.query_id = query_id
    msg.result_metadata_id = result_metadata_id
    return _query_params(msg, query_params, consistency_level, serial_consistency_level, fetch_size, paging_state,
                         timestamp, skip_meta, None)


cdef object _query_message(query, consistency_level, serial_consistency_level, fetch_size, paging_state, timestamp,
                           keyspace):
    if _SCYLLA or QueryMessage.__init__ is not _QUERY_INIT:
        return QueryMessage(query, consistency_level, serial_consistency_level, fetch_size, paging_state, timestamp,
                            None, keyspace)
    msg = _new_object(QueryMessage)
    msg.query = query
    return _query_params(msg, None, consistency_level, serial_consistency_level, fetch_size, paging_state, timestamp,
                         False, keyspace)


def execute_message(query_id, query_params, consistency_level, serial_consistency_level, fetch_size, paging_state,
                    timestamp, skip_meta, result_metadata_id):
    """``pyfactories.futures._futures_py.execute_message``."""
    return _execute_message(query_id, query_params, consistency_level, serial_consistency_level, fetch_size,
                            paging_state, timestamp, skip_meta, result_metadata_id)


def query_message(query, consistency_level, serial_consistency_level, fetch_size, paging_state, timestamp, keyspace):
    """``pyfactories.futures._futures_py.query_message``."""
    return _query_message(query, consistency_level, serial_consistency_level, fetch_size, paging_state, timestamp,
                          keyspace)
