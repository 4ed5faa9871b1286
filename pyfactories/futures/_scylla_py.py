"""The leaner futures' steps where scylla-driver's ``ResponseFuture`` and ``Session`` differ from
cassandra-driver's: part of the pure-Python twin (and specification) of the compiled
``pyfactories.futures._futures`` (its ``_scylla.pxi``), used when the driver is scylla-driver
(:data:`SCYLLA`) in a release pyfactories is tested on.

Followed here, as scylla-driver does them:

* :func:`query` (its ``_query``): the pool is asked for a connection by the statement's routing key,
  keyspace and table (a connection of the shard that owns the key) and, with tablet versions
  (:data:`TABLET_VERSIONS`), by the routing token computed once when the future was built; the stream
  is recorded on the future before the message is sent (and put back if sending fails), and the
  answer decoded with the result metadata taken with its id when the message was built;
* :func:`set_result` (its ``_set_result``): rows or none, the connection given back by the pool's own
  method unless the pool is shut down; an answer with a custom payload (tablet routing) or a new result
  metadata id, like any other answer, goes to the driver's method;
* :func:`routing` and :func:`execute_message` (its ``_create_response_future``): the routing token, and
  the message with its ``tablet_version_block`` and the metadata snapshot (tablet versions);
* :func:`init_extras` (its ``ResponseFuture.__init__``): the attributes scylla-driver's futures add.

The query plan is the load-balancing policy's own (scylla-driver's token-aware policy knows tablets),
and its ``_set_final_result``/``_set_final_exception`` are ``_callbacks_py``'s (:data:`ABORTABLE`).
"""

from __future__ import annotations

from typing import Any

from cassandra.cluster import _NOT_SET, ResponseFuture
from cassandra.protocol import RESULT_KIND_ROWS, RESULT_KIND_VOID, ExecuteMessage, ResultMessage

from .. import _support
from ._callbacks_py import ABORTABLE, Completion, log, not_sent, pool_for, take_answer

#: whether the driver is scylla-driver, whose futures these steps follow
SCYLLA = _support.PROTOCOL_FEATURES
#: whether its requests carry tablet versions (routing tokens, result metadata snapshots, aborted retries):
#: all of them came in one release (3.29.12), told by its ``_abort_retry`` (the futures run only on the
#: releases pyfactories is tested on)
TABLET_VERSIONS = SCYLLA and ABORTABLE


def init_extras(future: Any, bound_result_metadata: Any, routing_token: Any) -> None:
    """What scylla-driver's ``ResponseFuture.__init__`` sets before the query plan that cassandra-driver's
    does not (its ``_control_connection_requests``, set later, is ``init_future``'s)."""
    if TABLET_VERSIONS:
        future._bound_result_metadata = [] if bound_result_metadata is _NOT_SET else bound_result_metadata
        future._routing_token = routing_token
    future._control_connection_query_attempted = False
    if TABLET_VERSIONS:
        future._page_generation = 0
        future._retry_aborted = False


def plan(load_balancer: Any, keyspace: Any, query: Any, host: Any) -> Any:
    """scylla-driver's ``ResponseFuture._make_query_plan``."""
    return iter([host]) if host else iter(load_balancer.make_query_plan(keyspace, query))


def routing(session: Any, query: Any) -> tuple:
    """``(routing key, routing token)`` of a request, as scylla-driver's ``_create_response_future``
    computes them once (no token without a token map or a partitioner the driver can hash)."""
    routing_key = query.routing_key
    token = None
    if routing_key is not None:
        metadata = session.cluster.metadata
        token_map = metadata.token_map
        if token_map is not None and metadata.can_support_partitioner():
            token = token_map.token_class.from_key(routing_key)
    return routing_key, token


def execute_message(session: Any, query: Any, prepared_statement: Any, cl: Any, serial_cl: Any, fetch_size: Any,
                    paging_state: Any, stamp: Any, routing_key: Any, routing_token: Any) -> tuple:
    """``(message, result metadata)`` of a bound statement, as scylla-driver builds them (no continuous
    paging): with tablet versions, the metadata and its id read as one pair, metadata skipped only with
    both, and the message's ``tablet_version_block``."""
    if not TABLET_VERSIONS:
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


def query(future: Any, host: Any, message: Any = None, cb: Any = None) -> Any:
    """scylla-driver's ``ResponseFuture._query``; the answer goes to :class:`Completion`."""
    if message is None:
        message = future.message
    future._control_connection_query_attempted = False
    pool = pool_for(future, host)
    if pool is None:
        return None
    future._current_host = host
    connection = None
    previous_request_id = future._req_id
    request_id = None
    sent = False
    try:
        statement = future.query
        if not statement:
            connection, request_id = pool.borrow_connection(timeout=2.0)
        elif TABLET_VERSIONS:
            connection, request_id = pool.borrow_connection(
                timeout=2.0, routing_key=statement.routing_key, keyspace=statement.keyspace, table=statement.table,
                routing_token=future._routing_token)
        else:
            connection, request_id = pool.borrow_connection(
                timeout=2.0, routing_key=statement.routing_key, keyspace=statement.keyspace, table=statement.table)
        future._connection = connection
        if TABLET_VERSIONS:
            result_meta = future._bound_result_metadata
        else:
            result_meta = future.prepared_statement.result_metadata if future.prepared_statement else []
        if cb is None:
            cb = Completion(future, host, connection, pool)
        if TABLET_VERSIONS:
            future._req_id = request_id
        handler = future._protocol_handler
        future.request_encoded_size = connection.send_msg(message, request_id, cb, handler.encode_message,
                                                          handler.decode_message, result_meta)
        sent = True
        future.attempted_hosts.append(host)
        return request_id
    except Exception as exc:
        not_sent(future, host, pool, connection, exc)
    finally:
        if TABLET_VERSIONS and request_id is not None and not sent and future._req_id == request_id:
            future._req_id = previous_request_id
    return None


def set_result(future: Any, host: Any, connection: Any, pool: Any, response: Any) -> None:
    """scylla-driver's ``ResponseFuture._set_result`` of a RESULT with rows or without (VOID), no trace,
    no custom payload and no new result metadata id: any other answer goes to the driver's method."""
    kind = response.kind if isinstance(response, ResultMessage) else None
    if (type(kind) is not int or kind not in (RESULT_KIND_ROWS, RESULT_KIND_VOID) or getattr(response, "trace_id", None)
            or getattr(response, "custom_payload", None) or getattr(response, "result_metadata_id", None) is not None
            or getattr(future.message, "continuous_paging_options", None)):
        ResponseFuture._set_result(future, host, connection, pool, response)
        return
    try:
        future.coordinator_host = host
        if pool and not pool.is_shutdown:
            pool.return_connection(connection)
        take_answer(future, response, kind)
    except Exception as exc:
        log.exception("Unexpected exception while handling result in ResponseFuture:")
        future._set_final_exception(exc)
