"""Deprecated: the fast path is now ``pyfactories.decoding``, and one call turns every part on.

    import pyfactories
    pyfactories.enable(cluster)   # before connect(); or pyfactories.enable(session) after

Every name here still works, with a ``DeprecationWarning`` that names the new call.
"""

from __future__ import annotations

import warnings
from typing import Any

from . import decoding as _decoding

#: what replaces each name
NEW = {
    "enable": "pyfactories.enable(session)",
    "disable": "pyfactories.disable(session)",
    "cluster_options": "pyfactories.enable(cluster) before cluster.connect()",
    "bind": "pyfactories.binding.bind(prepared, values)",
}


def _deprecated(name: str) -> None:
    new = NEW.get(name, f"pyfactories.decoding.{name}")
    warnings.warn(f"pyfactories.fastpath.{name} is deprecated: use {new}", DeprecationWarning, stacklevel=3)


def enable(session: Any, rows: str = "named", binds: bool = True, futures: bool = True) -> bool:
    """``pyfactories.enable(session, rows=rows, binds=binds, futures=futures)``: True if rows are built
    while decoding."""
    _deprecated("enable")
    from ._enable import enable as enable_all

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # it warned as the fast path's before
        done = enable_all(session, rows=rows, binds=binds, futures=futures, connection=False)
    if not done["rows"].on:
        warnings.warn(f"pyfactories.fastpath stays off: {done['rows'].why}", RuntimeWarning, stacklevel=2)
    return done["rows"].on


def disable(session: Any) -> None:
    """``pyfactories.disable(session)``."""
    _deprecated("disable")
    from ._enable import disable as disable_all

    disable_all(session)


def cluster_options(connection_class: type | None = None) -> dict[str, Any]:
    """``pyfactories.connection.cluster_options(connection_class)``; ``pyfactories.enable(cluster)`` does it."""
    _deprecated("cluster_options")
    from . import connection

    return connection.cluster_options(connection_class)


def __getattr__(name: str) -> Any:
    if name == "bind":
        _deprecated(name)
        from .binding import bind

        return bind
    value = getattr(_decoding, name)  # an AttributeError for a name neither has
    _deprecated(name)
    return value
