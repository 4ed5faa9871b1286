"""How a column list becomes a row class: the driver's naming rules, written out.

The driver's ``named_tuple_factory`` cleans every column name, tries
``namedtuple('Row', cleaned)`` and, when Python refuses those names (keywords,
leading digits, empty or duplicate names), logs one warning and falls back to
positional names. This module reproduces those rules exactly (the tests compare
against ``cassandra.query`` for generated column lists) and adds what the
driver lacks: the class is built once per column list by the callers' cache,
and its rows pickle by field names, so they can cross process boundaries.

Both implementations (the compiled one and the pure-Python one) call
:func:`make_row_class` on a cache miss: class creation is rare, so it stays in
Python where it is easy to read.
"""

from __future__ import annotations

import keyword
import logging
import re
from collections import namedtuple
from functools import lru_cache
from typing import Any, Iterable, Sequence

log = logging.getLogger("pyfactories")

_NON_ALNUM = re.compile("[^a-zA-Z0-9]")
_LEADING_BAD = re.compile("^[^a-zA-Z0-9]*")
_TRAILING_BAD = re.compile("[^a-zA-Z0-9_]*$")


@lru_cache(maxsize=4096)
def clean_column_name(name: str) -> str:
    """``[applied]`` -> ``applied``, ``system.count(*)`` -> ``system_count``.

    Trailing characters other than letters, digits and ``_`` go, then leading
    non-alphanumerics (so a leading ``_`` goes too), then every remaining
    non-ASCII-alphanumeric becomes ``_``: the driver's order of operations.
    """
    return _NON_ALNUM.sub("_", _LEADING_BAD.sub("", _TRAILING_BAD.sub("", name)))


def _is_bad_identifier(name: str) -> bool:
    return (
        not all(c.isalnum() or c == "_" for c in name)
        or keyword.iskeyword(name)
        or not name
        or name[0].isdigit()
        or name.startswith("_")
    )


def sanitize_identifiers(names: Sequence[str]) -> list[str]:
    """The driver's fallback: invalid names become ``field_<i>_``, then duplicates get ``_`` appended."""
    out = [f"field_{i}_" if _is_bad_identifier(name) else name for i, name in enumerate(names)]
    seen: set[str] = set()
    for i, name in enumerate(out):
        while name in seen:
            name += "_"
        out[i] = name
        seen.add(name)
    return out


def _reduce_row(row: Any) -> tuple:
    # Rows are rebuilt from their field names, not from the class's (unimportable) qualified name.
    return rebuild_row, (type(row)._fields, tuple(row))


_build_namedtuple: Any = namedtuple  # field names are only known at run time


def _namedtuple(fields: Iterable[str]) -> Any:
    cls = _build_namedtuple("Row", list(fields), module=__name__)
    cls.__reduce__ = _reduce_row
    return cls


def make_row_class(colnames: Sequence[str]) -> Any:
    """Build the namedtuple class the driver would build for ``colnames``."""
    cleaned = [clean_column_name(name) for name in colnames]
    try:
        return _namedtuple(cleaned)
    except Exception:
        log.warning(
            "Failed creating named tuple for results with column names %s (cleaned: %s) "
            "(see Python 'namedtuple' documentation for details on name rules). "
            "Results will be returned with positional names. "
            "Avoid this by choosing different names, using SELECT \"<col name>\" AS aliases, "
            "or specifying a different row_factory on your Session",
            list(colnames),
            cleaned,
        )
        return _namedtuple(sanitize_identifiers(cleaned))


@lru_cache(maxsize=512)
def _class_for_fields(fields: tuple[str, ...]) -> Any:
    return _namedtuple(fields)


def rebuild_row(fields: tuple[str, ...], values: tuple[Any, ...]) -> tuple:
    """Unpickle a row: same field names, same values, a class shared per field list."""
    return _class_for_fields(tuple(fields))._make(values)
