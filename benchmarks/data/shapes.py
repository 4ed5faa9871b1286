"""Synthetic result sets shaped like what the driver hands a row factory.

The driver's Cython parser gives a row factory ``(colnames, rows)``: a list of
column names and a list of tuples of already-deserialised values. The values'
types do not change what a row factory does (it only stores references), but
they change the heap the factory works in, so three kinds are offered:
``ints``, ``text`` and ``mixed`` (int, text, float, bool, UUID, timestamp,
bigint, Decimal, bytes and the odd NULL, column by column, as a real table
would have them). Every set is built from a fixed seed.
"""

from __future__ import annotations

import datetime as _dt
import random
import uuid
from decimal import Decimal
from typing import Any, Callable

KINDS = ("ints", "text", "mixed")

_BASE_NAMES = (
    "id", "name", "email", "created_at", "score", "active", "owner_id", "balance", "avatar", "note",
    "city", "country", "updated_at", "version", "kind", "status", "rank", "tags", "ttl_s", "region",
)


def column_names(cols: int) -> list[str]:
    """Realistic, valid, distinct names: the first 20 from a list, then ``c20``, ``c21``, ..."""
    return [(_BASE_NAMES[i] if i < len(_BASE_NAMES) else f"c{i}") for i in range(cols)]


def _text(rng: random.Random) -> str:
    n = rng.randint(5, 30)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789 _-") for _ in range(n))


_EPOCH = _dt.datetime(2020, 1, 1)

_MIXED: tuple[Callable[[random.Random], Any], ...] = (
    lambda r: r.randint(-(2**31), 2**31 - 1),                       # int
    _text,                                                           # text
    lambda r: r.random() * 1e6,                                      # double
    lambda r: r.random() < 0.5,                                      # boolean
    lambda r: uuid.UUID(int=r.getrandbits(128), version=4),          # uuid
    lambda r: _EPOCH + _dt.timedelta(seconds=r.randint(0, 10**8)),   # timestamp
    lambda r: r.randint(-(2**63), 2**63 - 1),                        # bigint
    lambda r: Decimal(r.randint(0, 10**8)) / 100,                    # decimal
    lambda r: r.randbytes(r.randint(4, 16)),                         # blob
    lambda r: None if r.random() < 0.3 else _text(r),               # nullable text
)


def _value_maker(kind: str, col: int) -> Callable[[random.Random], Any]:
    if kind == "ints":
        return _MIXED[0]
    if kind == "text":
        return _text
    if kind == "mixed":
        return _MIXED[col % len(_MIXED)]
    raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}")


def make_rows(rows: int, cols: int, kind: str, seed: int = 2024) -> tuple[list[str], list[tuple]]:
    """``(colnames, rows)``: ``rows`` distinct tuples of ``cols`` values of ``kind``."""
    rng = random.Random(f"{seed}/{rows}/{cols}/{kind}")
    makers = [_value_maker(kind, c) for c in range(cols)]
    return column_names(cols), [tuple(m(rng) for m in makers) for _ in range(rows)]


def case_id(rows: int, cols: int, kind: str) -> str:
    return f"{rows}x{cols} {kind}"
