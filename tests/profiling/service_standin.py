"""A stand-in for a user's service: a mix of queries against a real node, with a row factory
whose cost is planted (:mod:`slow_factory`), for ``python -m profiling attach`` and ``record``.

    python tests/profiling/service_standin.py --hosts 127.0.0.1 --keyspace KS --seconds 10

Each round: a sync select and insert, selects and inserts in flight together
(``execute_concurrent``) and an async select waited on; every select returning ``--rows`` rows of 5 text columns through ``slow_tuple_factory``. It
prints ``ready`` once connected and loaded; SIGUSR1 appends to ``--counters`` a JSON line
with the factory's burned CPU so far and the process's CPU (both in ns), so a test can
take the planted share over any window; SIGTERM or SIGINT ends it cleanly.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
import time

from cassandra.cluster import Cluster
from cassandra.concurrent import execute_concurrent
from cassandra.query import named_tuple_factory

import slow_factory

COLUMNS = 5


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9042)
    parser.add_argument("--keyspace", required=True)
    parser.add_argument("--seconds", type=float, default=3600.0)
    parser.add_argument("--rows", type=int, default=50)
    parser.add_argument("--counters", help="file SIGUSR1 appends the counters to")
    parser.add_argument("--cpus", help="CPUs to run on, e.g. 1 (its threads, the driver's included, stay there)")
    parser.add_argument("--named-tuples", action="store_true",
                        help="the driver's named_tuple_factory instead of the planted cost")
    parser.add_argument("--pyfactories-connection", action="store_true",
                        help="pyfactories' connection class (connection.cluster_options()) instead of the driver's")
    args = parser.parse_args()
    if args.cpus:
        os.sched_setaffinity(0, {int(c) for c in args.cpus.split(",")})
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    if args.counters:
        signal.signal(signal.SIGUSR1, lambda *_: _append_counters(args.counters))
    options = {}
    if args.pyfactories_connection:
        from pyfactories import connection

        options = connection.cluster_options()
    cluster = Cluster(args.hosts.split(","), port=args.port, **options)
    session = cluster.connect()
    try:
        _load(session, args.keyspace, args.rows)
        session.row_factory = named_tuple_factory if args.named_tuples else slow_factory.slow_tuple_factory
        select = session.prepare(f"SELECT * FROM {args.keyspace}.items WHERE p = ?")
        insert = session.prepare(f"INSERT INTO {args.keyspace}.events (p, c, {_names()}) VALUES (?, ?, {_marks()})")
        print("ready", flush=True)
        deadline = time.monotonic() + args.seconds
        n = 0
        while not stop.is_set() and time.monotonic() < deadline:
            session.execute(select, (n % 4,))
            session.execute(insert, (n % 16, n, *_values(n)))
            batch = [(select, (k % 4,)) for k in range(24)] + [(insert, (k, n, *_values(k))) for k in range(8)]
            for ok, result in execute_concurrent(session, batch, concurrency=8, raise_on_first_error=False):
                if not ok:
                    raise result
            session.execute_async(select, (n % 4,)).result()
            n += 1
    finally:
        cluster.shutdown()
    return 0


def _names() -> str:
    return ", ".join(f"v{i}" for i in range(COLUMNS))


def _marks() -> str:
    return ", ".join("?" for _ in range(COLUMNS))


def _values(n: int) -> list[str]:
    return [f"value {n} {i}" for i in range(COLUMNS)]


def _load(session, keyspace: str, rows: int) -> None:
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}", timeout=60)
    columns = ", ".join(f"v{i} text" for i in range(COLUMNS))
    for table in ("items", "events"):
        session.execute(f"CREATE TABLE IF NOT EXISTS {keyspace}.{table} (p int, c int, {columns}, "
                        "PRIMARY KEY (p, c))", timeout=60)
    insert = session.prepare(f"INSERT INTO {keyspace}.items (p, c, {_names()}) VALUES (?, ?, {_marks()})")
    for p in range(4):
        for c in range(rows):
            session.execute(insert, (p, c, *_values(c)))


def _append_counters(path: str) -> None:
    with open(path, "a") as f:
        f.write(json.dumps({**slow_factory._burned, "cpu_ns": time.process_time_ns()}) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
