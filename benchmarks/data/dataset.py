"""The benchmark keyspace on a real Cassandra: schema, deterministic data, how to connect.

Keyspace ``pyfactories_bench`` (replication factor 1). Tables, all loaded from
a fixed seed so every run (and the captured fixtures) sees the same values:

* ``narrow``: 10 columns, 10,000 single-row partitions: the select workload of
  the "Avoid namedtuple" write-up (many small SELECTs of one row over 10,000 rows);
* ``pages``: 10 columns, 50 partitions of 200 rows: one page per query;
* ``wide``: 50 columns, 20 partitions of 200 rows;
* ``coll``: 10 columns, 6 of them collections or tuples, 20 partitions of 200 rows.

Loading happens once: a row in ``bench_meta`` records the version of the data
set, and a later run that finds it skips the load.
"""

from __future__ import annotations

import datetime as _dt
import random
import time
import uuid
from typing import Any, Callable, Sequence

KEYSPACE = "pyfactories_bench"
DATASET_VERSION = "2"  # bump when a table or its data changes

NARROW_ROWS = 10_000
PAGE_ROWS = 200
PAGES_PARTITIONS = 50
WIDE_PARTITIONS = 20
COLL_PARTITIONS = 20
WIDE_COLS = 50

_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
          "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango")
_EPOCH = _dt.datetime(2020, 1, 1)


def _wide_columns() -> list[tuple[str, str]]:
    """(name, CQL type) of the 48 value columns of ``wide``: int, text, double, bigint in turn."""
    kinds = ("int", "text", "double", "bigint")
    return [(f"v{i:02d}", kinds[i % 4]) for i in range(2, WIDE_COLS)]


TABLES: dict[str, str] = {
    "narrow": """CREATE TABLE IF NOT EXISTS {ks}.narrow (
        k int PRIMARY KEY, name text, email text, created_at timestamp, score double,
        active boolean, owner_id uuid, balance bigint, avatar blob, note text)""",
    "pages": """CREATE TABLE IF NOT EXISTS {ks}.pages (
        p int, c int, name text, email text, created_at timestamp, score double,
        active boolean, owner_id uuid, balance bigint, note text, PRIMARY KEY (p, c))""",
    "wide": "CREATE TABLE IF NOT EXISTS {ks}.wide (p int, c int, "
            + ", ".join(f"{n} {t}" for n, t in _wide_columns()) + ", PRIMARY KEY (p, c))",
    "coll": """CREATE TABLE IF NOT EXISTS {ks}.coll (
        p int, c int, name text, updated timestamp, tags set<text>, scores list<int>,
        attrs map<text, int>, point frozen<tuple<double, double>>, history list<frozen<map<text, int>>>,
        flags set<int>, PRIMARY KEY (p, c))""",
    "bench_meta": "CREATE TABLE IF NOT EXISTS {ks}.bench_meta (name text PRIMARY KEY, version text, loaded_at timestamp)",
}


def _text(rng: random.Random, lo: int = 5, hi: int = 24) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))[:hi].ljust(lo, "x")


def _person(rng: random.Random) -> list[Any]:
    name = _text(rng)
    return [
        name,
        f"{name.replace(' ', '.')}@example.com",
        _EPOCH + _dt.timedelta(milliseconds=rng.randint(0, 10**11)),
        round(rng.random() * 1000, 3),
        rng.random() < 0.5,
        uuid.UUID(int=rng.getrandbits(128), version=4),
        rng.randint(-(2**40), 2**40),
    ]


def narrow_rows() -> list[tuple]:
    rng = random.Random("narrow")
    return [tuple([k] + _person(rng) + [rng.randbytes(rng.randint(8, 32)), _text(rng)]) for k in range(NARROW_ROWS)]


def pages_rows() -> list[tuple]:
    rng = random.Random("pages")
    return [tuple([p, c] + _person(rng) + [_text(rng)]) for p in range(PAGES_PARTITIONS) for c in range(PAGE_ROWS)]


def wide_rows() -> list[tuple]:
    rng = random.Random("wide")
    makers: dict[str, Callable[[], Any]] = {
        "int": lambda: rng.randint(0, 1000),
        "text": lambda: rng.choice(_WORDS),
        "double": lambda: round(rng.random() * 100, 2),
        "bigint": lambda: rng.randint(0, 10**6),
    }
    cols = _wide_columns()
    return [tuple([p, c] + [makers[t]() for _, t in cols]) for p in range(WIDE_PARTITIONS) for c in range(PAGE_ROWS)]


def coll_rows() -> list[tuple]:
    rng = random.Random("coll")
    out = []
    for p in range(COLL_PARTITIONS):
        for c in range(PAGE_ROWS):
            out.append((
                p, c, _text(rng), _EPOCH + _dt.timedelta(seconds=rng.randint(0, 10**8)),
                set(rng.sample(_WORDS, rng.randint(1, 5))),
                [rng.randint(0, 100) for _ in range(rng.randint(1, 8))],
                {w: rng.randint(0, 10**4) for w in rng.sample(_WORDS, rng.randint(1, 5))},
                (round(rng.random() * 90, 4), round(rng.random() * 180, 4)),
                [{w: rng.randint(0, 9)} for w in rng.sample(_WORDS, rng.randint(1, 3))],
                set(rng.sample(range(100), rng.randint(1, 4))),
            ))
    return out


_LOADERS: dict[str, tuple[Callable[[], list[tuple]], Sequence[str]]] = {
    "narrow": (narrow_rows, ("k", "name", "email", "created_at", "score", "active", "owner_id", "balance",
                             "avatar", "note")),
    "pages": (pages_rows, ("p", "c", "name", "email", "created_at", "score", "active", "owner_id", "balance",
                           "note")),
    "wide": (wide_rows, ["p", "c"] + [n for n, _ in _wide_columns()]),
    "coll": (coll_rows, ("p", "c", "name", "updated", "tags", "scores", "attrs", "point", "history", "flags")),
}


# --- connection ------------------------------------------------------------------------------

#: What the benchmarks and ``capture`` pass to ``profiling.cluster.connect``. No compression: the
#: bodies the protocol handler decodes are then the bodies on the wire, and the client CPU is not
#: spent on (de)compressing; generous timeouts for a node sharing a small machine.
CONNECT_OPTIONS: dict[str, Any] = {"compression": False, "connect_timeout": 30.0, "request_timeout": 60.0}


def cassandra_version(session) -> str:
    row = session.execute("SELECT release_version FROM system.local").one()
    return str(row[0] if isinstance(row, tuple) else row["release_version"])


# --- schema and data ---------------------------------------------------------------------------

def ensure_dataset(session, say: Callable[[str], None] = print, replication_factor: int = 1) -> bool:
    """Create the keyspace and tables and load the data unless this version is already there.

    Returns True if data was loaded now.
    """
    from cassandra.concurrent import execute_concurrent_with_args

    session.execute(
        f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
        f"{{'class': 'SimpleStrategy', 'replication_factor': {int(replication_factor)}}}"
    )
    for ddl in TABLES.values():
        session.execute(ddl.format(ks=KEYSPACE))
    session.cluster.control_connection.wait_for_schema_agreement()
    rows = list(session.execute(f"SELECT name, version FROM {KEYSPACE}.bench_meta WHERE name = 'dataset'"))
    version = rows[0][1] if rows and isinstance(rows[0], tuple) else (rows[0]["version"] if rows else None)
    if version == DATASET_VERSION:
        return False
    t0 = time.perf_counter()
    for table, (make, columns) in _LOADERS.items():
        data = make()
        insert = session.prepare(
            f"INSERT INTO {KEYSPACE}.{table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        )
        say(f"loading {len(data)} rows into {KEYSPACE}.{table} ...")
        for ok, res in execute_concurrent_with_args(session, insert, data, concurrency=64, raise_on_first_error=True):
            if not ok:  # pragma: no cover - raise_on_first_error raises first
                raise res
    session.execute(
        f"INSERT INTO {KEYSPACE}.bench_meta (name, version, loaded_at) VALUES ('dataset', %s, toTimestamp(now()))",
        (DATASET_VERSION,),
    )
    say(f"data set version {DATASET_VERSION} loaded in {time.perf_counter() - t0:.0f} s")
    return True
