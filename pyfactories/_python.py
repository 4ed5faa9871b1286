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

import operator
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


def _is_list_or_tuple(obj: Any) -> bool:
    # By the object's real type: isinstance() would also believe a __class__ attribute that lies.
    return issubclass(type(obj), (list, tuple))


def column_key(colnames: Any) -> tuple[str, ...]:
    """The cache key of a column list, after checking it is a list/tuple of ``str``.

    ``str`` subclasses are copied to plain ``str``: a key with a user-defined
    ``__eq__``/``__hash__`` would run Python code inside the cache. A list or
    tuple subclass is read once, through its own iteration.
    """
    if not _is_list_or_tuple(colnames):
        raise TypeError(f"colnames must be a list or tuple of str, not {type(colnames).__name__}")
    names = []
    for i, name in enumerate(colnames):
        if not issubclass(type(name), str):
            raise TypeError(f"column name {i} must be str, not {type(name).__name__}")
        names.append(name if type(name) is str else str.__str__(name))
    return tuple(names)


def rows_of(rows: Any) -> list | tuple:
    """``rows`` itself when it is an exact list or tuple, else (a subclass) a list of what its own iteration yields.

    That is what the driver's factories read (``for row in rows``): never what a
    subclass's ``__len__`` or ``__getitem__`` says.
    """
    if type(rows) is list or type(rows) is tuple:
        return rows
    if not _is_list_or_tuple(rows):
        raise TypeError(f"rows must be a list of rows, not {type(rows).__name__}")
    return [row for row in rows]


def row_values(row: Any, i: int, ncols: int) -> list | tuple:
    """Row ``i`` as an exact list or tuple of ``ncols`` values (``TypeError``/``ValueError`` if it is not one).

    A list or tuple subclass is copied to a tuple of what its own iteration
    yields (what ``Row(*row)`` and ``zip(colnames, row)`` read), at most one
    more than ``ncols`` values: its ``__len__`` and its storage are not asked.
    """
    if type(row) is tuple or type(row) is list:
        if len(row) != ncols:
            raise ValueError(f"row {i} has {len(row)} values but there are {ncols} columns")
        return row
    if not _is_list_or_tuple(row):
        raise TypeError(f"row {i} must be a tuple or list, not {type(row).__name__}")
    values: list[Any] = []
    for value in row:
        if len(values) == ncols:
            raise ValueError(f"row {i} has more than {ncols} values but there are {ncols} columns")
        values.append(value)
    if len(values) != ncols:
        raise ValueError(f"row {i} has {len(values)} values but there are {ncols} columns")
    return tuple(values)


class ColumnSetCache(Generic[V]):
    """A thread-safe LRU cache from column lists to what is built from them."""

    def __init__(self, build: Callable[[tuple[str, ...]], V], maxsize: int = DEFAULT_CACHE_SIZE) -> None:
        self._build = build
        self._entries: OrderedDict[tuple[str, ...], V] = OrderedDict()
        self._lock = threading.RLock()  # dropping an entry may run code that uses the cache
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
        built = self._build(key)  # outside the lock: it runs arbitrary Python (and may log, or use this cache)
        with self._lock:
            try:
                value = self._entries[key]  # another caller stored one meanwhile: the first stored wins
            except KeyError:
                value = built
                self.misses += 1
                self._entries[key] = value
                while len(self._entries) > self._maxsize:
                    self._entries.popitem(last=False)
            else:
                self._entries.move_to_end(key)
                self.hits += 1
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
    # An exact int: an int subclass's comparisons could say it is positive when it is not.
    if type(maxsize) is bool or not issubclass(type(maxsize), int):
        raise ValueError(f"cache size must be a positive int, got {maxsize!r}")
    size = operator.index(maxsize)  # the int's own value, whatever its class says
    if size < 1:
        raise ValueError(f"cache size must be a positive int, got {size!r}")
    return size


def _dict_keys(key: tuple[str, ...]) -> tuple[str, ...]:
    # The first occurrence of a column list supplies the key strings of every later dict:
    # their hashes are computed once, and equal lists share the same objects.
    return key


_row_classes: ColumnSetCache[Any] = ColumnSetCache(make_row_class)
_key_sets: ColumnSetCache[tuple[str, ...]] = ColumnSetCache(_dict_keys)


def cached_named_tuple_factory(colnames: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[tuple]:
    """Rows as namedtuples, like the driver's ``named_tuple_factory``, with the class cached."""
    key = column_key(colnames)
    cls = _row_classes.get(key)
    rows = rows_of(rows)
    # tuple.__new__, as the compiled rows are filled: not the class's _make or __new__, which code may replace
    return [tuple.__new__(cls, row_values(rows[i], i, len(key))) for i in range(len(rows))]


def dict_factory(colnames: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    """Rows as dicts, like the driver's ``dict_factory`` (a repeated column: the last value wins)."""
    keys = _key_sets.get(column_key(colnames))
    rows = rows_of(rows)
    return [dict(zip(keys, row_values(rows[i], i, len(keys)))) for i in range(len(rows))]


def ordered_dict_factory(colnames: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[OrderedDict[str, Any]]:
    """Rows as ``OrderedDict``, like the driver's ``ordered_dict_factory``."""
    keys = _key_sets.get(column_key(colnames))
    rows = rows_of(rows)
    return [OrderedDict(zip(keys, row_values(rows[i], i, len(keys)))) for i in range(len(rows))]


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
