"""Row-factory choices by name, shared by the profiling harness and the benchmarks.

A choice is applied to a connected ``Session`` whatever way it was configured:
through its default execution profile (the modern way) or, for sessions in
legacy mode, ``session.row_factory``. Fast-path choices also switch the
session's protocol handler with ``pyfactories.fastpath``. Applying a choice to
a session that had another one first undoes the other, so benchmarks can
interleave factories round by round on one session.

Names: the driver's four (``tuple``, ``named_tuple``, ``dict``,
``ordered_dict``), ours (``cached_named_tuple``, ``pf_dict``,
``pf_ordered_dict``), the fast path (``fastpath_named``, ``fastpath_dict``),
or ``module:function`` for any importable row factory.
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass
from typing import Any, Callable

from cassandra import query
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Session

import pyfactories


@dataclass(frozen=True)
class FactoryChoice:
    name: str
    row_factory: Callable[[Any, Any], Any]
    fastpath: str | None = None  # rows= for pyfactories.fastpath.enable
    family: str = "driver"  # "driver", "pyfactories", "fastpath" or "custom"

    def apply(self, session: Session) -> None:
        """Make ``session`` return rows of this choice from its next query on."""
        if _fastpath_enabled(session):
            _fastpath_module().disable(session)
        if self.fastpath:
            _fastpath_module().enable(session, rows=self.fastpath)
        elif session.cluster._config_mode == _legacy_mode():
            session.row_factory = self.row_factory
        else:
            session.cluster.profile_manager.profiles[EXEC_PROFILE_DEFAULT].row_factory = self.row_factory


def _legacy_mode():
    from cassandra.cluster import _ConfigMode

    return _ConfigMode.LEGACY


def _fastpath_module():
    """``pyfactories.fastpath`` if it is on in this build; its reason as a ValueError otherwise."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the reason is raised below instead
        fastpath = importlib.import_module("pyfactories.fastpath")
    if not fastpath.AVAILABLE:
        raise ValueError(f"the fast path is off in this build: {fastpath.UNAVAILABLE_REASON}")
    return fastpath


def _fastpath_enabled(session: Session) -> bool:
    try:
        return _fastpath_module().is_enabled(session)
    except ValueError:
        return False


BUILTIN: dict[str, FactoryChoice] = {
    "tuple": FactoryChoice("tuple", query.tuple_factory),
    "named_tuple": FactoryChoice("named_tuple", query.named_tuple_factory),
    "dict": FactoryChoice("dict", query.dict_factory),
    "ordered_dict": FactoryChoice("ordered_dict", query.ordered_dict_factory),
    "cached_named_tuple": FactoryChoice("cached_named_tuple", pyfactories.cached_named_tuple_factory, family="pyfactories"),
    "pf_dict": FactoryChoice("pf_dict", pyfactories.dict_factory, family="pyfactories"),
    "pf_ordered_dict": FactoryChoice("pf_ordered_dict", pyfactories.ordered_dict_factory, family="pyfactories"),
    "fastpath_named": FactoryChoice("fastpath_named", query.tuple_factory, fastpath="named", family="fastpath"),
    "fastpath_dict": FactoryChoice("fastpath_dict", query.tuple_factory, fastpath="dict", family="fastpath"),
}


def resolve(name: str) -> FactoryChoice:
    """A choice by short name, or ``module:function`` for a user's own factory."""
    if name in BUILTIN:
        return BUILTIN[name]
    if ":" in name:
        module_name, _, attr = name.partition(":")
        try:
            factory = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"cannot import row factory {name!r}: {exc}") from exc
        if not callable(factory):
            raise ValueError(f"{name!r} is not callable")
        return FactoryChoice(name, factory, family="custom")
    raise ValueError(f"unknown factory {name!r}; choose one of {', '.join(BUILTIN)} or module:function")


def available() -> list[str]:
    """Names whose implementation loads in this build (the fast path may be absent)."""
    names = [n for n, c in BUILTIN.items() if not c.fastpath]
    try:
        _fastpath_module()
    except ValueError:
        return names
    return names + [n for n, c in BUILTIN.items() if c.fastpath]
