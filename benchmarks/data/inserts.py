"""The write workloads' table on a real Cassandra: ``timers_bench.inserts``, 10 columns, its schema,
its prepared INSERT and SELECT, and the deterministic rows written to it.

The connection benchmarks (``bench_timeouts``, ``bench_framing``, ``bench_writes``) insert these
rows and select them back; the end-to-end benchmark's ``insert50`` and ``insert1000`` workloads
(``benchmarks.e2e.workloads``) insert them; ``bench_bind`` binds its INSERT.
"""

from __future__ import annotations

import random

KEYSPACE = "timers_bench"
INSERT = f"INSERT INTO {KEYSPACE}.inserts (k, c1, c2, c3, c4, c5, c6, c7, c8, c9) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
SCHEMA = (
    f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}",
    f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.inserts (k int PRIMARY KEY, c1 int, c2 bigint, c3 text, c4 double, "
    "c5 boolean, c6 int, c7 text, c8 bigint, c9 double)",
)
KEYS = 100_000

SELECT = f"SELECT * FROM {KEYSPACE}.inserts WHERE k = ?"
SELECT_KEYS = 1000  # the "select" workload's rows, written first: every select answers one row


def rows() -> list[tuple]:
    """The :data:`KEYS` rows, in key order, the same on every call."""
    rng = random.Random("timeouts")
    return [(i, rng.randrange(2**31), rng.randrange(2**62), f"text {i}", rng.random(), bool(i & 1), i,
             "x" * (i % 20), i * 7, i / 3) for i in range(KEYS)]
