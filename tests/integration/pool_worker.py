"""Process-pool workers in the pattern of the multiprocessing write-up: each worker
builds its own Cluster and Session in the pool initializer, after the fork, and returns named rows to
the parent, which gets them by unpickling.

The "fork" start method must fork a process without driver threads, so the tests run it from a fresh
interpreter that creates no Cluster before forking::

    python -m tests.integration.pool_worker --config cached --hosts 127.0.0.1 --port 9042 --out rows.pickle

which runs the pool, checks the workers' rows against rows it reads itself afterwards, and writes the
workers' results (pickled again) to ``--out`` for the test to compare in a third process.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import pickle
import sys
from multiprocessing import util as mp_util

from profiling.cluster import Contact, open_cluster
from pyfactories import cached_named_tuple_factory
from pyfactories import decoding

from .support import KS, Address, assert_same_rows

# Every column whose values the driver makes picklable: not the unregistered UDTs (their namedtuple
# classes cannot be found by name) nor maps keyed by tuples (OrderedMapSerializedKey keeps the key's
# CQL type class, built at run time). The awkward names keep the driver's positional fallback in play.
POOL_COLUMNS = [
    "pk", "ck", "c_ascii", "c_bigint", "c_blob", "c_boolean", "c_date", "c_decimal", "c_double", "c_duration",
    "c_float", "c_inet", "c_int", "c_smallint", "c_text", "c_time", "c_timestamp", "c_timeuuid", "c_tinyint",
    "c_uuid", "c_varint", "c_list", "c_set", "c_map", "c_frozen_list", "c_frozen_set", "c_frozen_map",
    "c_nested_list", "c_tuple", "c_udt_cls", "c_list_udt_cls", "c_vector", "c_vector_text", "c_static",
    '"Weird Name"', '"select"', '"1st"', '"_x"',
]  # fmt: skip
POOL_SELECT = f"SELECT {', '.join(POOL_COLUMNS)} FROM {KS}.all_types WHERE pk = ?"
POOL_KEYS = [1, 2, 3, 1]
CONFIGS = ("cached", "fastpath")  # cached_named_tuple_factory, or the fast path's named rows

_session = None
_prepared = None
_failure: str | None = None


def connect(hosts: list[str], port: int, protocol: int, config: str):
    cluster = open_cluster(Contact(hosts, port), protocol_version=protocol, row_factory=cached_named_tuple_factory)
    cluster.register_user_type(KS, "address_cls", Address)
    session = cluster.connect()
    if config == "fastpath":
        assert decoding.enable(session, rows="named")
    elif config != "cached":
        raise ValueError(config)
    return cluster, session


def init(hosts: list[str], port: int, protocol: int, config: str) -> None:
    """Pool initializer: runs in the worker, after the fork.

    A failure is kept and raised by every task (an initializer that raises makes the pool start
    new workers forever, and the parent would wait forever)."""
    global _session, _prepared, _failure
    try:
        cluster, _session = connect(hosts, port, protocol, config)
        _prepared = _session.prepare(POOL_SELECT)
        _prepared.fetch_size = 2  # the worker pages too
        mp_util.Finalize(None, cluster.shutdown, exitpriority=10)  # closes its connections when the worker exits
    except Exception as exc:
        _failure = f"{type(exc).__name__}: {exc}"


def select(pk: int):
    if _failure is not None:
        raise RuntimeError(f"pool worker {os.getpid()} could not connect: {_failure}")
    return os.getpid(), list(_session.execute(_prepared, (pk,)))


def run_pool(method: str, hosts: list[str], port: int, protocol: int, config: str, processes: int = 2,
             timeout: float = 120.0):
    """``[(worker pid, rows)]`` for POOL_KEYS, from a pool of ``processes`` workers started by ``method``."""
    ctx = multiprocessing.get_context(method)
    pool = ctx.Pool(processes, initializer=init, initargs=(hosts, port, protocol, config))
    try:
        results = pool.map_async(select, POOL_KEYS, chunksize=1).get(timeout)
    except BaseException:
        pool.terminate()
        pool.join()
        raise
    pool.close()
    pool.join()
    return results


def read_here(hosts: list[str], port: int, protocol: int, config: str) -> dict[int, list]:
    cluster, session = connect(hosts, port, protocol, config)
    try:
        prepared = session.prepare(POOL_SELECT)
        return {pk: list(session.execute(prepared, (pk,))) for pk in set(POOL_KEYS)}
    finally:
        cluster.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", choices=CONFIGS, required=True)
    parser.add_argument("--hosts", required=True, help="comma-separated")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--protocol", type=int, default=5)
    parser.add_argument("--start-method", default="fork")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    hosts = args.hosts.split(",")
    # No Cluster exists in this process yet: the fork copies no driver threads or sockets.
    results = run_pool(args.start_method, hosts, args.port, args.protocol, args.config)
    here = read_here(hosts, args.port, args.protocol, args.config)
    for pk, (pid, rows) in zip(POOL_KEYS, results):
        assert pid != os.getpid()
        assert_same_rows(rows, here[pk])
    with open(args.out, "wb") as out:
        pickle.dump({"parent": os.getpid(), "results": results}, out)
    print(f"{len(results)} results from workers {sorted({pid for pid, _ in results})}, equal to the parent's rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
