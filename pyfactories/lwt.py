"""``was_applied`` for lightweight transactions, whatever the row factory.

The driver's ``ResultSet.was_applied`` refuses every row factory but its own
three (it compares by identity), so with ours it raises ``RuntimeError``. The
answer does not depend on the factory: a conditional statement's result has
the ``[applied]`` column first, so it is item 0 of a tuple-like row, the
``[applied]`` key of a mapping row, or the ``applied`` attribute (the driver's
cleaned name of the column) of a typed row (``class_row``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cassandra.query import BatchStatement

APPLIED = "[applied]"


def was_applied(result: Any) -> bool:
    """Whether the conditional statement (or LWT batch) that produced ``result`` was applied.

    ``result`` is what ``Session.execute`` returned (a ``ResultSet``), or a
    ``ResponseFuture``'s ``.result()``. Same checks as the driver: a batch
    without LWT and a non-batch result with other than one row are errors.
    """
    future = result.response_future
    rows = result.current_rows
    if isinstance(future.query, BatchStatement):
        if not result.column_names or result.column_names[0] != APPLIED:
            raise RuntimeError("No LWT were present in the BatchStatement")
    elif len(rows) != 1:
        raise RuntimeError(f"LWT result should have exactly one row. This has {len(rows)}.")
    row = rows[0]
    if isinstance(row, Mapping):
        return bool(row[APPLIED])
    if isinstance(row, tuple):
        return bool(row[0])
    try:
        return bool(row.applied)
    except AttributeError:
        raise TypeError(f"cannot read [applied] from a row of type {type(row).__name__} "
                        "(a typed row needs a field named applied)") from None
