# Included by _futures.pyx: the steps where scylla-driver's futures differ from cassandra-driver's
# (pyfactories.futures._scylla_py's init_extras, plan, routing, execute_message, query and set_result;
# its token_aware_plan is ScyllaTokenAwarePlan, in _plans.pxi).

from pyfactories.futures._scylla_py import SCYLLA as _SCYLLA_LINE, TABLET_VERSIONS as _TABLET_VERSIONS_LINE
from pyfactories.futures._scylla_py import IN_ORDER as _IN_ORDER_LINE, _PLANNED as _PLANNED_LINE
from pyfactories.futures._scylla_py import Tablets as _Tablets

cdef bint _SCYLLA = _SCYLLA_LINE
SCYLLA = _SCYLLA_LINE
cdef bint _TABLET_VERSIONS = _TABLET_VERSIONS_LINE
cdef tuple _IN_ORDER = _IN_ORDER_LINE
cdef tuple _PLANNED = _steps(tuple([(step[0], step[1]) for step in _PLANNED_LINE]))  # (the twin's names, as imported)
cdef object _IS_SERIAL = ConsistencyLevel.is_serial
cdef object _SERIAL_LEVELS = (ConsistencyLevel.SERIAL, ConsistencyLevel.LOCAL_SERIAL)


cdef inline bint _serial(level) except -1:
    """``ConsistencyLevel.is_serial(level)``, compared here for ``None`` or an exact ``int`` while the
    driver's function is the one imported."""
    is_serial = ConsistencyLevel.is_serial
    if is_serial is _IS_SERIAL and (level is None or type(level) is int):
        return level is not None and level in _SERIAL_LEVELS
    return bool(is_serial(level))


cdef inline void _init_extras(future, result_metadata, routing_token) except *:
    if _TABLET_VERSIONS:
        future._bound_result_metadata = [] if result_metadata is _NOT_SET else result_metadata
        future._routing_token = routing_token
    future._control_connection_query_attempted = False
    if _TABLET_VERSIONS:
        future._page_generation = 0
        future._retry_aborted = False


cdef inline object _scylla_plan(load_balancer, keyspace, query, host):
    if host:
        return iter([host])
    if type(load_balancer) is TokenAwarePolicy and "make_query_plan" not in load_balancer.__dict__:
        return ScyllaTokenAwarePlan(load_balancer, keyspace, query)
    return iter(load_balancer.make_query_plan(keyspace, query))


def scylla_plan(load_balancer, keyspace, query, host):
    """``pyfactories.futures._scylla_py.plan``."""
    return _scylla_plan(load_balancer, keyspace, query, host)


cdef bint _untabled(metadata, keyspace, query, routing_key) except -1:
    """``pyfactories.futures._scylla_py.untabled``."""
    if (type(metadata) is not Metadata or type(routing_key) is not bytes or type(keyspace) is not str
            or _metadata.murmur3 is None or not _unchanged(_PLANNED)):
        return False
    token_map = metadata.token_map
    if type(token_map) is not TokenMap or token_map.token_class is not Murmur3Token:
        return False
    tablets = metadata._tablets
    by_table = tablets._tablets if type(tablets) is _Tablets else None
    if type(by_table) is not dict:
        return False
    found = (<dict>by_table).get((keyspace, query.table))
    return found is None or (type(found) is list and len(<list>found) == 0)


cdef tuple _routing(session, query):
    routing_key = query.routing_key
    token = None
    if routing_key is not None:
        metadata = session.cluster.metadata
        token_map = metadata.token_map
        if token_map is not None and metadata.can_support_partitioner():
            token = token_map.token_class.from_key(routing_key)
    return routing_key, token


cdef tuple _scylla_execute_message(session, query, prepared_statement, cl, serial_cl, fetch_size, paging_state, stamp,
                                   routing_key, routing_token):
    if not _TABLET_VERSIONS:
        return ExecuteMessage(prepared_statement.query_id, query.values, cl, serial_cl, fetch_size, paging_state, stamp,
                              skip_meta=bool(prepared_statement.result_metadata), continuous_paging_options=None,
                              result_metadata_id=prepared_statement.result_metadata_id), _NOT_SET
    result_metadata, result_metadata_id = prepared_statement.result_metadata_and_id
    message = ExecuteMessage(prepared_statement.query_id, query.values, cl, serial_cl, fetch_size, paging_state, stamp,
                             skip_meta=bool(result_metadata) and result_metadata_id is not None,
                             continuous_paging_options=None, result_metadata_id=result_metadata_id,
                             tablet_version_block=session._compute_tablet_version_block(query, routing_key,
                                                                                        routing_token))
    return message, result_metadata


def scylla_query(FutureFields future not None, host, message=None, cb=None):
    """``pyfactories.futures._scylla_py.query``."""
    cdef bint sent = False
    if message is None:
        message = future.message
    future._control_connection_query_attempted = False
    pool = _pool_for(future, host)
    if pool is None:
        return None
    future._current_host = host
    connection = None
    previous_request_id = future._req_id
    request_id = None
    try:
        statement = future.query
        if not statement:
            connection, request_id = pool.borrow_connection(timeout=2.0)
        elif _TABLET_VERSIONS:
            connection, request_id = pool.borrow_connection(
                timeout=2.0, routing_key=statement.routing_key, keyspace=statement.keyspace, table=statement.table,
                routing_token=future._routing_token)
        else:
            connection, request_id = pool.borrow_connection(
                timeout=2.0, routing_key=statement.routing_key, keyspace=statement.keyspace, table=statement.table)
        future._connection = connection
        if _TABLET_VERSIONS:
            result_meta = future._bound_result_metadata
        else:
            prepared = future.prepared_statement
            result_meta = prepared.result_metadata if prepared else []
        if cb is None:
            cb = Completion(future, host, connection, pool)
        if _TABLET_VERSIONS:
            future._req_id = request_id
        handler = future._protocol_handler
        future.request_encoded_size = connection.send_msg(message, request_id, cb, handler.encode_message,
                                                          handler.decode_message, result_meta)
        sent = True
        future.attempted_hosts.append(host)
        return request_id
    except Exception as exc:
        _not_sent(future, host, pool, connection, exc)
    finally:
        if _TABLET_VERSIONS and request_id is not None and not sent and future._req_id == request_id:
            future._req_id = previous_request_id
    return None


def scylla_set_result(FutureFields future not None, host, connection, pool, response):
    """``pyfactories.futures._scylla_py.set_result``."""
    if not isinstance(response, ResultMessage):
        _driver_set_result(future, host, connection, pool, response)
        return
    kind = response.kind
    if (type(kind) is not int or (kind != RESULT_KIND_ROWS and kind != RESULT_KIND_VOID)
            or getattr(response, "trace_id", None) or getattr(response, "custom_payload", None)
            or getattr(response, "result_metadata_id", None) is not None
            or getattr(future.message, "continuous_paging_options", None)):
        _driver_set_result(future, host, connection, pool, response)
        return
    try:
        future.coordinator_host = host
        if pool and not pool.is_shutdown:
            pool.return_connection(connection)
        _take_answer(future, response, kind)
    except Exception as exc:
        log.exception("Unexpected exception while handling result in ResponseFuture:")
        future._set_final_exception(exc)
