"""Fast rows and requests for the Apache Cassandra Python driver: one call turns everything on.

    import pyfactories
    pyfactories.enable(cluster)        # before cluster.connect(): every part this driver supports
    print(pyfactories.status(session)) # each part: on or off, and why

or only the row factories, on any driver:

    from pyfactories import cached_named_tuple_factory
    session.row_factory = cached_named_tuple_factory

``__impl__`` says which implementation is in use: ``"cython"`` or ``"python"``.
"""

from typing import TYPE_CHECKING, Any

from . import _driver

_driver.check()  # a clear error without a driver, a warning with two (before the first `cassandra` import)

from cassandra.query import tuple_factory  # noqa: E402

from ._impl import name as __impl__  # noqa: E402
from .lwt import was_applied  # noqa: E402
from .rows import (  # noqa: E402
    CacheInfo,
    ColumnMismatch,
    RowFactory,
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

if TYPE_CHECKING:
    from ._enable import Cluster, Part, Status, disable, enable, status

__version__ = "0.1.0"

# The one call and its introspection import the driver's cluster module and every part: only when used.
_ENABLING = ("Cluster", "Part", "Status", "disable", "enable", "status")


def __getattr__(name: str) -> Any:
    if name in _ENABLING:
        from . import _enable

        return getattr(_enable, name)
    raise AttributeError(f"module 'pyfactories' has no attribute {name!r}")


__all__ = [
    "__impl__",
    "args_row",
    "CacheInfo",
    "class_row",
    "Cluster",
    "ColumnMismatch",
    "disable",
    "enable",
    "kwargs_row",
    "Part",
    "RowFactory",
    "cache_clear",
    "cache_info",
    "cached_named_tuple_factory",
    "dict_factory",
    "ordered_dict_factory",
    "set_cache_size",
    "Status",
    "status",
    "tuple_factory",
    "was_applied",
]
