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

* :func:`plan` (its ``_make_query_plan``): for its default ``TokenAwarePolicy``, :func:`token_aware_plan`
  follows the policy's steps for a table without tablets (replicas from the token map found as
  ``_plans_py.get_replicas`` finds them, shuffled unless the statement is a lightweight transaction,
  then every host the child's plan adds, each list taken by host distance); a table with tablets, and
  anything that is not the driver's own metadata, token map and tablets as imported, is planned by
  the policy's own ``make_query_plan``.

Its ``_set_final_result``/``_set_final_exception`` are ``_callbacks_py``'s (:data:`ABORTABLE`).
"""

from __future__ import annotations

from collections.abc import Iterator
from random import shuffle
from typing import Any

from cassandra import ConsistencyLevel
from cassandra import metadata as _metadata
from cassandra.cluster import _NOT_SET, ResponseFuture
from cassandra.metadata import Metadata, Murmur3Token, TokenMap
from cassandra.policies import HostDistance, TokenAwarePolicy
from cassandra.protocol import RESULT_KIND_ROWS, RESULT_KIND_VOID, ExecuteMessage, ResultMessage

from .. import _support
from ._callbacks_py import ABORTABLE, Completion, log, not_sent, pool_for, take_answer
from ._plans_py import _steps, _unchanged, distance, get_replicas
from ._pools_py import lend_unsharded, return_connection

try:  # scylla-driver's tablets (cassandra-driver has none)
    from cassandra.tablets import Tablets
except ImportError:
    Tablets = None

#: whether the driver is scylla-driver, whose futures these steps follow
SCYLLA = _support.PROTOCOL_FEATURES
#: whether its requests carry tablet versions (routing tokens, result metadata snapshots, aborted retries):
#: all of them came in one release (3.29.12), told by its ``_abort_retry`` (the futures run only on the
#: releases pyfactories is tested on)
TABLET_VERSIONS = SCYLLA and ABORTABLE
#: the distances scylla-driver's token-aware policy takes hosts in, nearest first
IN_ORDER = tuple(getattr(HostDistance, name) for name in ("LOCAL_RACK", "LOCAL", "REMOTE") if hasattr(HostDistance, name))
#: what the policy's search for a tablet and its plan call on the driver's classes, as imported
_PLANNED = _steps(((TokenAwarePolicy, "make_query_plan"), (Tablets, "get_tablet_for_key"),
                   (Tablets, "_tablets"))) if SCYLLA else ()


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
    """scylla-driver's ``ResponseFuture._make_query_plan``: :func:`token_aware_plan` for its default policy."""
    if host:
        return iter([host])
    if type(load_balancer) is TokenAwarePolicy and "make_query_plan" not in vars(load_balancer):
        return token_aware_plan(load_balancer, keyspace, query)
    return iter(load_balancer.make_query_plan(keyspace, query))


def untabled(metadata: Any, keyspace: Any, query: Any, routing_key: Any) -> bool:
    """Whether scylla-driver's policy finds no tablet for the request, told without its calls: its own
    metadata, Murmur3 token map and tablets, as imported, a key it hashes, and no tablet of the table."""
    if (type(metadata) is not Metadata or type(routing_key) is not bytes or type(keyspace) is not str
            or _metadata.murmur3 is None or not _unchanged(_PLANNED)):
        return False
    token_map = metadata.token_map
    if type(token_map) is not TokenMap or token_map.token_class is not Murmur3Token:
        return False
    tablets = metadata._tablets
    by_table = tablets._tablets if type(tablets) is Tablets else None
    if type(by_table) is not dict:
        return False
    found = by_table.get((keyspace, query.table))
    return found is None or (type(found) is list and not found)


def token_aware_plan(policy: Any, working_keyspace: Any, query: Any) -> Iterator[Any]:
    """scylla-driver's ``TokenAwarePolicy.make_query_plan`` for a table without tablets (the same hosts in
    the same order, the same calls on the policies and the same random numbers drawn); its own for the rest."""
    keyspace = query.keyspace if query and query.keyspace else working_keyspace
    child = policy._child_policy
    routing_key = None if query is None else query.routing_key  # read once (a property of a bound statement)
    if routing_key is None or keyspace is None:
        yield from child.make_query_plan(keyspace, query)
        return
    metadata = policy._cluster_metadata
    if not untabled(metadata, keyspace, query, routing_key):  # tablets (and a leader): the policy's own steps
        yield from TokenAwarePolicy.make_query_plan(policy, working_keyspace, query)
        return
    replicas = get_replicas(metadata, keyspace, routing_key)
    if (policy.shuffle_replicas and not query.is_lwt()
            and not (TABLET_VERSIONS and ConsistencyLevel.is_serial(query.consistency_level))):
        shuffle(replicas)
    yield from _in_order(child, replicas)
    yield from _in_order(child, [host for host in child.make_query_plan(keyspace, query) if host not in replicas])


def _in_order(child: Any, hosts: Any) -> Iterator[Any]:
    """The policy's ``yield_in_order``: the hosts that are up, nearest distance first."""
    for wanted in IN_ORDER:
        for host in hosts:
            if host.is_up and distance(child, host) == wanted:
                yield host


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
        stated = bool(statement)  # (asked once, as the driver asks it)
        if stated:  # read as the driver reads them to choose a shard, whether it chooses one or not
            routing_key, keyspace, table = statement.routing_key, statement.keyspace, statement.table
        lent = lend_unsharded(pool)
        if lent is not None:
            connection, request_id = lent
        elif not stated:
            connection, request_id = pool.borrow_connection(timeout=2.0)
        elif TABLET_VERSIONS:
            connection, request_id = pool.borrow_connection(timeout=2.0, routing_key=routing_key, keyspace=keyspace,
                                                            table=table, routing_token=future._routing_token)
        else:
            connection, request_id = pool.borrow_connection(timeout=2.0, routing_key=routing_key, keyspace=keyspace,
                                                            table=table)
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
            return_connection(pool, connection)
        take_answer(future, response, kind)
    except Exception as exc:
        log.exception("Unexpected exception while handling result in ResponseFuture:")
        future._set_final_exception(exc)
