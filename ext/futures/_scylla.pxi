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
        if token_map is not None:
            token = _murmur3_token(metadata, token_map, routing_key)
            if token is _NOT_MADE:
                token = token_map.token_class.from_key(routing_key) if metadata.can_support_partitioner() else None
    return routing_key, token


def scylla_routing(session, query):
    """``pyfactories.futures._scylla_py.routing``."""
    return _routing(session, query)


cdef object _NOT_MADE = object()
# What making a token reads of the driver's classes beyond the replicas' search (``_SEARCHED``): the
# partitioner's check, and the ``__init__`` the token's own calls
cdef tuple _ROUTED = _steps(((Metadata, "can_support_partitioner"), (HashToken, "__init__")))
cdef object _CAN_SUPPORT = _drivers_own(Metadata.__dict__.get("can_support_partitioner"))


cdef object _murmur3_token(metadata, token_map, routing_key):
    """``Murmur3Token.from_key(routing_key)``, made here (hashed in C, the object's ``value`` set as its
    ``__init__`` sets it) where the driver's ``can_support_partitioner()`` is true without a call: its own
    ``Metadata`` with a partitioner named, the driver's ``murmur3`` as imported, its classes unchanged.
    ``_NOT_MADE`` otherwise (the driver's steps)."""
    if (type(metadata) is not Metadata or type(token_map) is not TokenMap or type(routing_key) is not bytes
            or token_map.token_class is not Murmur3Token or _DRIVERS_MURMUR3 is None
            or _metadata.murmur3 is not _DRIVERS_MURMUR3 or not _unchanged(_SEARCHED) or not _unchanged(_ROUTED)
            or type(metadata.partitioner) is not str
            or not _bound_as(metadata, "can_support_partitioner", _CAN_SUPPORT)):
        return _NOT_MADE
    cdef int64_t hashed = _murmur3(<const unsigned char*>PyBytes_AS_STRING(routing_key), PyBytes_GET_SIZE(routing_key))
    token = _new_object(Murmur3Token)
    token.value = _MAX_LONG if hashed == INT64_MIN else hashed  # (the driver's hash_fn: MIN_LONG is not a token)
    return token


# scylla-driver 3.29.12's tablet version block: its Session method and the functions it calls, as imported
cdef object _COMPUTE_BLOCK = _drivers_own(Session.__dict__.get("_compute_tablet_version_block"))
cdef tuple _BLOCK_STEPS = _steps(((Session, "_compute_tablet_version_block"),)) if _TABLET_VERSIONS else ()
cdef object _cluster_module = _import_module("cassandra.cluster")
cdef object _tablets_module = _import_module("cassandra.tablets") if _TABLET_VERSIONS else None
cdef object _RANDOM_BLOCK = getattr(_tablets_module, "random_tablet_version_block", None)


cdef object _tablet_version_block(session, query, routing_key, routing_token):
    """``session._compute_tablet_version_block(query, routing_key, routing_token)``, its steps taken here
    while its method is the driver's as imported: for a table without tablets (against Cassandra, every
    table) the random byte is drawn as the driver's function draws it, from the same ``getrandbits``; a
    table with tablets, or a step replaced, is the driver's (its ``get_tablet_for_key`` and functions)."""
    if not (_TABLET_VERSIONS and type(session) is Session and _unchanged(_BLOCK_STEPS)
            and _bound_as(session, "_compute_tablet_version_block", _COMPUTE_BLOCK)):
        return session._compute_tablet_version_block(query, routing_key, routing_token)
    if routing_key is None:
        return 0
    keyspace = query.keyspace or session.keyspace
    table = query.table
    if not keyspace or not table:
        return 0
    if routing_token is not None:
        tablets = session.cluster.metadata._tablets
        by_table = (tablets._tablets if type(tablets) is _Tablets and type(keyspace) is str and type(table) is str
                    and _unchanged(_PLANNED) else None)
        found = (<dict>by_table).get((keyspace, table)) if type(by_table) is dict else _NOT_MADE
        if not (found is None or (type(found) is list and len(<list>found) == 0)):  # a table with tablets
            tablet = tablets.get_tablet_for_key(keyspace, table, routing_token)
            if tablet is not None and tablet.tablet_version is not None:
                return _cluster_module.choose_tablet_version_block(tablet.tablet_version)
    draw = _cluster_module.random_tablet_version_block
    if draw is _RANDOM_BLOCK and _RANDOM_BLOCK is not None:
        return _tablets_module.getrandbits(8)  # (its body)
    return draw()


def tablet_version_block(session, query, routing_key, routing_token):
    """``session._compute_tablet_version_block(query, routing_key, routing_token)`` (scylla-driver 3.29.12)."""
    return _tablet_version_block(session, query, routing_key, routing_token)


cdef tuple _scylla_execute_message(session, query, prepared_statement, cl, serial_cl, fetch_size, paging_state, stamp,
                                   routing_key, routing_token):
    if not _TABLET_VERSIONS:
        return _execute_message(prepared_statement.query_id, query.values, cl, serial_cl, fetch_size, paging_state,
                                stamp, bool(prepared_statement.result_metadata),
                                prepared_statement.result_metadata_id), _NOT_SET
    result_metadata, result_metadata_id = prepared_statement.result_metadata_and_id
    query_id, values = prepared_statement.query_id, query.values
    skip_meta = bool(result_metadata) and result_metadata_id is not None
    block = _tablet_version_block(session, query, routing_key, routing_token)
    return _execute_message(query_id, values, cl, serial_cl, fetch_size, paging_state, stamp, skip_meta,
                            result_metadata_id, block), result_metadata


def scylla_query(FutureFields future not None, host, message=None, cb=None):
    """``pyfactories.futures._scylla_py.query``."""
    cdef bint sent = False
    cdef bint stated
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
        stated = bool(statement)  # (asked once, as the driver asks it)
        if stated:  # read as the driver reads them to choose a shard, whether it chooses one or not
            routing_key, keyspace, table = statement.routing_key, statement.keyspace, statement.table
        lent = _lend_unsharded(pool)
        if lent is not None:
            connection, request_id = <tuple>lent
        elif not stated:
            connection, request_id = pool.borrow_connection(timeout=2.0)
        elif _TABLET_VERSIONS:
            connection, request_id = pool.borrow_connection(timeout=2.0, routing_key=routing_key, keyspace=keyspace,
                                                            table=table, routing_token=future._routing_token)
        else:
            connection, request_id = pool.borrow_connection(timeout=2.0, routing_key=routing_key, keyspace=keyspace,
                                                            table=table)
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
    if not _is_instance(response, ResultMessage):
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
            _return_connection(pool, connection)
        _take_answer(future, response, kind)
    except Exception as exc:
        log.exception("Unexpected exception while handling result in ResponseFuture:")
        future._set_final_exception(exc)
