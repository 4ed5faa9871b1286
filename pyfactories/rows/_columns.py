"""What the row factories share: the key of a column list, the rows and values read as the driver
hands them, and the bounded LRU cache of what is derived from a column list (a row class, dict keys,
a typed-row plan)."""

from __future__ import annotations

import operator
import threading
from collections import OrderedDict
from typing import Any, Callable, Generic, NamedTuple, TypeVar

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


def checked_rows(rows: Any) -> list | tuple:
    """``rows`` itself, checked to be a list or tuple (``TypeError`` if not), to be read as the driver's
    factories read it: ``for row in rows``, to the list's current end even if a row's own ``__iter__``
    makes it grow or shrink, through a subclass's own ``__iter__``, never its ``__len__``."""
    if not _is_list_or_tuple(rows):
        raise TypeError(f"rows must be a list of rows, not {type(rows).__name__}")
    return rows


def rows_of(rows: Any) -> list | tuple:
    """``rows`` itself when it is an exact list or tuple, else (a subclass) a list of what its own iteration yields.

    That is what the driver's factories read (``for row in rows``): never what a
    subclass's ``__len__`` or ``__getitem__`` says.
    """
    if type(rows) is list or type(rows) is tuple:
        return rows
    return [row for row in checked_rows(rows)]


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
