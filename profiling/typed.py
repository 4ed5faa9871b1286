"""Dataclass rows for any column list: what the profiler and the benchmarks time as "typed rows".

A service that wants typed rows has one class per query. The benchmarks and the profiler run
many column lists, so here each column list gets its own plain slotted dataclass (fields named
as the driver names a namedtuple's, ``clean_column_name``), made once and cached, and three
ways of building rows of it are offered with the driver's row-factory signature:

* :func:`handwritten_dataclass_rows`: what users write with the driver today,
  ``[Row(**r._asdict()) for r in named_tuple_factory(colnames, rows)]``;
* :func:`dataclass_rows`: ``pyfactories.class_row(Row)``, compiled;
* :func:`py_dataclass_rows`: the same with the pure-Python twin.

The class lookup costs one dict probe per call (not per row) in all three.
"""

from __future__ import annotations

import dataclasses
import keyword
from typing import Any, NamedTuple, Sequence

from cassandra.query import named_tuple_factory

from pyfactories import class_row
from pyfactories.rows import _typed_py
from pyfactories.rows._rowclass import clean_column_name

_MAX_CLASSES = 256


class _Entry(NamedTuple):
    cls: type
    compiled: Any  # class_row(cls)
    python: Any    # the pure-Python twin's class_row(cls)


_ENTRIES: dict[tuple[str, ...], _Entry] = {}


def _entry(colnames: Sequence[str]) -> _Entry:
    key = tuple(colnames)
    entry = _ENTRIES.get(key)
    if entry is None:
        fields = [clean_column_name(name) for name in key]
        bad = [f for f in fields if not f.isidentifier() or keyword.iskeyword(f) or f.startswith("_")]
        if bad or len(set(fields)) != len(fields):
            raise ValueError(f"columns {list(key)} do not name a dataclass's fields (cleaned: {fields})")
        cls = dataclasses.make_dataclass("Row", fields, slots=True)
        cls.__module__ = __name__
        entry = _Entry(cls, class_row(cls), _typed_py.class_row(cls))
        if len(_ENTRIES) >= _MAX_CLASSES:
            del _ENTRIES[next(iter(_ENTRIES))]
        _ENTRIES[key] = entry
    return entry


def dataclass_for(colnames: Sequence[str]) -> type:
    """The slotted dataclass of ``colnames`` (one per column list, the oldest dropped past 256)."""
    return _entry(colnames).cls


def handwritten_dataclass_rows(colnames: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[Any]:
    """The conversion users write today: a named row, a dict and a constructor call per row."""
    cls = dataclass_for(colnames)
    return [cls(**row._asdict()) for row in named_tuple_factory(colnames, rows)]


def dataclass_rows(colnames: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[Any]:
    """``pyfactories.class_row`` of the column list's dataclass."""
    return _entry(colnames).compiled(colnames, rows)


def py_dataclass_rows(colnames: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[Any]:
    """The same with pyfactories' pure-Python ``class_row``."""
    return _entry(colnames).python(colnames, rows)


# Ours: the fast path hands them the decoded tuples as it would hand them to ``class_row`` itself.
dataclass_rows.__pyfactories_factory__ = True  # type: ignore[attr-defined]
py_dataclass_rows.__pyfactories_factory__ = True  # type: ignore[attr-defined]
