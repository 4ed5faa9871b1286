"""Fast, cached row factories for the Apache Cassandra Python driver.

    from pyfactories import cached_named_tuple_factory
    session.row_factory = cached_named_tuple_factory

``__impl__`` says which implementation is in use: ``"cython"`` or ``"python"``.
"""

from typing import TYPE_CHECKING

from . import _driver

_driver.check()  # a clear error without a driver, a warning with two (before the first `cassandra` import)

from cassandra.query import tuple_factory  # noqa: E402

from ._impl import name as __impl__  # noqa: E402
from ._python import CacheInfo  # noqa: E402
from ._classrows import ColumnMismatch, RowFactory  # noqa: E402
from .lwt import was_applied  # noqa: E402

if TYPE_CHECKING:  # both implementations share the pure-Python signatures
    from ._python import (
        cache_clear,
        cache_info,
        cached_named_tuple_factory,
        dict_factory,
        ordered_dict_factory,
        set_cache_size,
    )
    from ._classrows import args_row, class_row, kwargs_row
else:
    from ._impl import impl as _chosen

    cached_named_tuple_factory = _chosen.cached_named_tuple_factory
    dict_factory = _chosen.dict_factory
    ordered_dict_factory = _chosen.ordered_dict_factory
    cache_info = _chosen.cache_info
    set_cache_size = _chosen.set_cache_size
    cache_clear = _chosen.cache_clear
    class_row = _chosen.class_row
    kwargs_row = _chosen.kwargs_row
    args_row = _chosen.args_row

__version__ = "0.1.0"

__all__ = [
    "__impl__",
    "args_row",
    "CacheInfo",
    "class_row",
    "ColumnMismatch",
    "kwargs_row",
    "RowFactory",
    "cache_clear",
    "cache_info",
    "cached_named_tuple_factory",
    "dict_factory",
    "ordered_dict_factory",
    "set_cache_size",
    "tuple_factory",
    "was_applied",
]
