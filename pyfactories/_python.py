"""Pure-Python row factories: the readable specification of ``_speedups``.

Each factory takes what the driver hands a row factory, ``(colnames, rows)``,
where ``colnames`` is a list of column names and ``rows`` a list of value
tuples, and returns a list of rows. What is derived from the column list (the
namedtuple class, the interned dict keys) is built once per distinct column
list and kept in a bounded LRU cache, so queries that alias columns
dynamically cannot grow memory without bound.

The compiled module implements the same functions with the same checks and the
same error messages; the tests run every case against both.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Generic, NamedTuple, Sequence, TypeVar

from ._rowclass import make_row_class

DEFAULT_CACHE_SIZE = 1024

V = TypeVar("V")


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    maxsize: int
    currsize: int


def column_key(colnames: Any) -> tuple[str, ...]:
    """The cache key of a column list, after checking it is a list/tuple of ``str``.

    ``str`` subclasses are copied to plain ``str``: a key with a user-defined
    ``__eq__``/``__hash__`` would run Python code inside the cache.
    """
    if not isinstance(colnames, (list, tuple)):
        raise TypeError(f"colnames must be a list or tuple of str, not {type(colnames).__name__}")
    for i, name in enumerate(colnames):
        if not isinstance(name, str):
            raise TypeError(f"column name {i} must be str, not {type(name).__name__}")
    return tuple(name if type(name) is str else str.__str__(name) for name in colnames)


def check_rows(rows: Any, ncols: int) -> None:
    """Raise ``TypeError``/``ValueError`` for anything that is not a list of ``ncols``-long rows."""
    if not isinstance(rows, (list, tuple)):
        raise TypeError(f"rows must be a list of rows, not {type(rows).__name__}")
    for i, row in enumerate(rows):
        if not isinstance(row, (list, tuple)):
            raise TypeError(f"row {i} must be a tuple or list, not {type(row).__name__}")
        if len(row) != ncols:
            raise ValueError(f"row {i} has {len(row)} values but there are {ncols} columns")


class ColumnSetCache(Generic[V]):
    """A thread-safe LRU cache from column lists to what is built from them."""

    def __init__(self, build: Callable[[tuple[str, ...]], V], maxsize: int = DEFAULT_CACHE_SIZE) -> None:
        self._build = build
        self._entries: OrderedDict[tuple[str, ...], V] = OrderedDict()
        self._lock = threading.Lock()
        self._maxsize = _check_maxsize(maxsize)
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[str, ...]) -> V:
        with self._lock:
            try:
                value = self._entries[key]
            except KeyError:
                pass
            else:
                self._entries.move_to_end(key)
                self.hits += 1
                return value
        value = self._build(key)  # outside the lock: it runs arbitrary Python (and may log)
        with self._lock:
            self.misses += 1
            self._entries[key] = value
            while len(self._entries) > self._maxsize:
                self._entries.popitem(last=False)
        return value

    def resize(self, maxsize: int) -> None:
        with self._lock:
            self._maxsize = _check_maxsize(maxsize)
            while len(self._entries) > self._maxsize:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0

    def info(self) -> CacheInfo:
        return CacheInfo(self.hits, self.misses, self._maxsize, len(self._entries))


def _check_maxsize(maxsize: Any) -> int:
    if not isinstance(maxsize, int) or isinstance(maxsize, bool) or maxsize < 1:
        raise ValueError(f"cache size must be a positive int, got {maxsize!r}")
    return maxsize


def _dict_keys(key: tuple[str, ...]) -> tuple[str, ...]:
    # The first occurrence of a column list supplies the key strings of every later dict:
    # their hashes are computed once, and equal lists share the same objects.
    return key


_row_classes: ColumnSetCache[Any] = ColumnSetCache(make_row_class)
_key_sets: ColumnSetCache[tuple[str, ...]] = ColumnSetCache(_dict_keys)


def cached_named_tuple_factory(colnames: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[tuple]:
    """Rows as namedtuples, like the driver's ``named_tuple_factory``, with the class cached."""
    key = column_key(colnames)
    check_rows(rows, len(key))
    make = _row_classes.get(key)._make
    return [make(row) for row in rows]


def dict_factory(colnames: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    """Rows as dicts, like the driver's ``dict_factory`` (a repeated column: the last value wins)."""
    keys = _key_sets.get(column_key(colnames))
    check_rows(rows, len(keys))
    return [dict(zip(keys, row)) for row in rows]


def ordered_dict_factory(colnames: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[OrderedDict[str, Any]]:
    """Rows as ``OrderedDict``, like the driver's ``ordered_dict_factory``."""
    keys = _key_sets.get(column_key(colnames))
    check_rows(rows, len(keys))
    return [OrderedDict(zip(keys, row)) for row in rows]


def cache_info() -> CacheInfo:
    """Hits, misses and size of the row-class cache."""
    return _row_classes.info()


def set_cache_size(maxsize: int) -> None:
    """Bound both column-list caches (row classes and dict keys) to ``maxsize`` entries."""
    _row_classes.resize(maxsize)
    _key_sets.resize(maxsize)


def cache_clear() -> None:
    _row_classes.clear()
    _key_sets.clear()


_TYPED_ROWS = ("class_row", "kwargs_row", "args_row", "ColumnMismatch")


def __getattr__(name: str) -> Any:
    # The typed-row factories live in ._classrows (which imports this module): reached here lazily.
    if name in _TYPED_ROWS:
        from . import _classrows

        return getattr(_classrows, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
