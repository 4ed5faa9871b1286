"""Rows: the row factories (named tuples, dicts) and typed rows (``class_row``, ``kwargs_row``, ``args_row``).

The compiled module ``_rows`` (from ``ext/rows/_rows.pyx``) implements the same functions as its
pure-Python specification ``_rows_py`` (named and dict rows) and ``_typed_py`` (typed rows); the tests
run every case against both. ``impl`` is the one in use (see ``pyfactories._impl``).
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from .._impl import choose
from ._columns import CacheInfo
from ._typed_py import ColumnMismatch, RowFactory

#: the implementation in use: ``pyfactories.rows._rows`` or, in pure Python, ``pyfactories.rows._rows_py``
impl: ModuleType = choose("pyfactories.rows._rows", "pyfactories.rows._rows_py")

if TYPE_CHECKING:  # both implementations share the specification's signatures
    from ._rows_py import (
        args_row,
        cache_clear,
        cache_info,
        cached_named_tuple_factory,
        class_row,
        dict_factory,
        kwargs_row,
        ordered_dict_factory,
        set_cache_size,
    )
else:
    cached_named_tuple_factory = impl.cached_named_tuple_factory
    dict_factory = impl.dict_factory
    ordered_dict_factory = impl.ordered_dict_factory
    cache_info = impl.cache_info
    set_cache_size = impl.set_cache_size
    cache_clear = impl.cache_clear
    class_row = impl.class_row
    kwargs_row = impl.kwargs_row
    args_row = impl.args_row

__all__ = ["CacheInfo", "ColumnMismatch", "RowFactory", "args_row", "cache_clear", "cache_info",
           "cached_named_tuple_factory", "class_row", "dict_factory", "impl", "kwargs_row", "ordered_dict_factory",
           "set_cache_size"]
