"""The data the patterns move: schema, values, and one request per operation.

A *read* operation selects one partition of ``rows_per_query`` rows; a *write*
inserts one row. Tables are named after their shape, so runs with the same
shape share them and the read data is loaded once per shape.

Requests are prepared statements with bound values (``statement="prepared"``), or
simple statements whose CQL text carries the values as literals (``"simple"``: the
driver's own benchmark scripts send these, one query string per operation).
"""

from __future__ import annotations

import datetime
import decimal
import uuid
from dataclasses import asdict, dataclass
from typing import Any, Callable

READ_PARTITIONS = 100
_WRITE_VALUE_POOL = 1024  # distinct value rows cycled by writes
STATEMENTS = ("prepared", "simple")


def _text(i: int) -> str:
    return f"value-{i:010d}"


COLUMN_TYPES: dict[str, Callable[[int], Any]] = {
    "text": _text,
    "ascii": _text,
    "int": lambda i: i,
    "bigint": lambda i: i * 1_000_003,
    "varint": lambda i: i ** 3,
    "double": lambda i: i * 0.25,
    "float": lambda i: float(i % 1024) / 2,
    "boolean": lambda i: i % 2 == 0,
    "decimal": lambda i: decimal.Decimal(i) / 100,
    "uuid": lambda i: uuid.UUID(int=i + 1),
    "timestamp": lambda i: datetime.datetime(2024, 1, 1) + datetime.timedelta(seconds=i),
    "date": lambda i: datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 3000),
    "blob": lambda i: i.to_bytes(8, "big") * 4,
}
#: ``mixed`` cycles through these, one per column.
MIXED = ("text", "int", "double", "uuid", "timestamp", "bigint", "boolean", "blob")


@dataclass(frozen=True)
class Workload:
    kind: str = "read"  # "read" or "write"
    num_columns: int = 5
    column_type: str = "text"
    rows_per_query: int = 10
    keyspace: str = "pyfactories_profile"
    statement: str = "prepared"  # one of STATEMENTS

    def __post_init__(self) -> None:
        if self.kind not in ("read", "write"):
            raise ValueError(f"workload kind must be read or write, not {self.kind!r}")
        if self.statement not in STATEMENTS:
            raise ValueError(f"statement must be one of {', '.join(STATEMENTS)}, not {self.statement!r}")
        if self.column_type != "mixed" and self.column_type not in COLUMN_TYPES:
            raise ValueError(f"unknown column type {self.column_type!r}; "
                             f"choose one of {', '.join([*COLUMN_TYPES, 'mixed'])}")
        if self.num_columns < 1 or self.rows_per_query < 1:
            raise ValueError("--num-columns and --rows-per-query must be at least 1")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def types(self) -> list[str]:
        if self.column_type == "mixed":
            return [MIXED[k % len(MIXED)] for k in range(self.num_columns)]
        return [self.column_type] * self.num_columns

    @property
    def table(self) -> str:
        shape = f"{self.column_type}_{self.num_columns}"
        name = f"read_{shape}_{self.rows_per_query}" if self.kind == "read" else f"write_{shape}"
        return f"{self.keyspace}.{name}"

    def row(self, i: int) -> tuple:
        return tuple(COLUMN_TYPES[t](i + k) for k, t in enumerate(self.types))

    def create_schema(self, session: Any, replication: int = 1) -> None:
        session.execute(
            f"CREATE KEYSPACE IF NOT EXISTS {self.keyspace} WITH replication = "
            f"{{'class': 'SimpleStrategy', 'replication_factor': {replication}}}")
        cols = ", ".join(f"v{k} {t}" for k, t in enumerate(self.types))
        session.execute(f"CREATE TABLE IF NOT EXISTS {self.table} "
                        f"(p int, c int, {cols}, PRIMARY KEY (p, c))")

    def _insert_cql(self, values: str | None = None) -> str:
        """The INSERT with a ``?`` per column, or with ``values`` (CQL text) after the key's."""
        names = ", ".join(f"v{k}" for k in range(self.num_columns))
        marks = ", ".join("?" * (self.num_columns + 2)) if values is None else f"{{}}, {{}}, {values}"
        return f"INSERT INTO {self.table} (p, c, {names}) VALUES ({marks})"

    def load(self, session: Any) -> None:
        """Create the table and, for reads, the partitions the selects read."""
        from cassandra.concurrent import execute_concurrent_with_args

        self.create_schema(session)
        if self.kind != "read":
            return
        insert = session.prepare(self._insert_cql())
        params = ((p, c, *self.row(p * self.rows_per_query + c))
                  for p in range(READ_PARTITIONS) for c in range(self.rows_per_query))
        for ok, result in execute_concurrent_with_args(session, insert, params, concurrency=64,
                                                       raise_on_first_error=False):
            if not ok:
                raise RuntimeError(f"loading {self.table} failed: {result!r}")

    def requests(self, session: Any, bind: Callable[[Callable[..., Any]], Callable[..., Any]]
                 ) -> Callable[[int], Any]:
        """``request(i)``: the bound statement (or the CQL text) of operation ``i``.

        ``bind`` wraps ``prepared.bind``, or the formatting of a simple statement's
        text (the instrumentation times either as encode). Values of writes come from
        a small pool built here, so the loop does not spend its time making test data.
        """
        if self.statement == "simple":
            return self._simple_requests(bind)
        if self.kind == "read":
            select = bind(session.prepare(f"SELECT * FROM {self.table} WHERE p = ?").bind)
            keys = [(p,) for p in range(READ_PARTITIONS)]
            return lambda i: select(keys[i % READ_PARTITIONS])
        insert = bind(session.prepare(self._insert_cql()).bind)
        pool = [self.row(j) for j in range(_WRITE_VALUE_POOL)]
        return lambda i: insert((i % 997, i, *pool[i % _WRITE_VALUE_POOL]))

    def _simple_requests(self, bind: Callable[[Callable[..., Any]], Callable[..., Any]]
                         ) -> Callable[[int], str]:
        """The same operations as CQL text with literal values, formatted per operation
        (as a client that builds query strings does); the session wraps each string in a
        ``SimpleStatement``."""
        if self.kind == "read":
            select = bind(f"SELECT * FROM {self.table} WHERE p = {{}}".format)
            return lambda i: select(i % READ_PARTITIONS)
        from cassandra.encoder import Encoder

        literal = Encoder().cql_encode_all_types
        insert = bind(self._insert_cql("{}").format)
        pool = [", ".join(map(literal, self.row(j))) for j in range(_WRITE_VALUE_POOL)]
        return lambda i: insert(i % 997, i, pool[i % _WRITE_VALUE_POOL])
