"""Pure-Python row factories: the readable specification of the compiled ``_rows``.

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

from collections import OrderedDict
from typing import Any, Sequence

from ._columns import DEFAULT_CACHE_SIZE, CacheInfo, ColumnSetCache, checked_rows, column_key, row_values
from ._rowclass import make_row_class
from ._typed_py import ColumnMismatch, args_row, class_row, kwargs_row


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
    # tuple.__new__, as the compiled rows are filled: not the class's _make or __new__, which code may replace
    return [tuple.__new__(cls, row_values(row, i, len(key))) for i, row in enumerate(checked_rows(rows))]


def dict_factory(colnames: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    """Rows as dicts, like the driver's ``dict_factory`` (a repeated column: the last value wins)."""
    keys = _key_sets.get(column_key(colnames))
    return [dict(zip(keys, row_values(row, i, len(keys)))) for i, row in enumerate(checked_rows(rows))]


def ordered_dict_factory(colnames: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[OrderedDict[str, Any]]:
    """Rows as ``OrderedDict``, like the driver's ``ordered_dict_factory``."""
    keys = _key_sets.get(column_key(colnames))
    return [OrderedDict(zip(keys, row_values(row, i, len(keys)))) for i, row in enumerate(checked_rows(rows))]


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


__all__ = ["CacheInfo", "DEFAULT_CACHE_SIZE", "ColumnMismatch", "args_row", "cache_clear", "cache_info", "cached_named_tuple_factory",
           "class_row", "dict_factory", "kwargs_row", "ordered_dict_factory", "set_cache_size"]
