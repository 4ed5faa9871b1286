"""Typed rows: ``class_row``, ``kwargs_row``, ``args_row`` (the readable specification).

A typed-row factory has the driver's row-factory signature ``(colnames, rows)``
and builds each row by calling a class or function with the row's values:

* ``class_row(cls)``: ``cls(field=value, ...)``, where a column belongs to the
  field named like the column after the driver's cleaning (``[applied]`` ->
  ``applied``, as in ``named_tuple_factory``);
* ``kwargs_row(func)``: ``func(**row)``, the keys being the column names as
  ``dict_factory`` gives them (uncleaned; a repeated column: the last value wins);
* ``args_row(func)``: ``func(*row)``.

What a column list means for a class (which column feeds which keyword, or
why it cannot) is worked out once per distinct column list and kept in a
bounded per-factory cache, like the row classes of the other factories. The
compiled module uses this module's field discovery, plans and errors, so both
implementations accept and refuse the same input with the same messages; it
only builds the rows differently (a vectorcall, or a direct slot fill for
plain slotted dataclasses, see ``_typed_fields``).
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from typing import Any, Callable, Generic, Literal, NamedTuple, Protocol, Sequence, TypeVar

from ._typed_fields import ClassSpec, class_spec, describe
from ._columns import ColumnSetCache, column_key, row_values, rows_of
from ._rowclass import clean_column_name

T = TypeVar("T")

EXTRA_CHOICES = ("error", "ignore")
PLAN_CACHE_SIZE = 128  # distinct column lists remembered per factory
FACTORY_CACHE_SIZE = 256  # (class, extra) pairs whose factory object is kept for reuse


class RowFactory(Protocol[T]):
    """What ``class_row``/``kwargs_row``/``args_row`` return: a driver row factory giving ``list[T]``."""

    def __call__(self, colnames: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[T]: ...


class ColumnMismatch(ValueError):
    """The columns of a result do not fit the class of a ``class_row`` factory.

    ``missing``: required fields no column provides; ``unexpected``: columns
    the class does not declare (as given, before cleaning); ``duplicates``:
    cleaned names that more than one column maps to.
    """

    def __init__(self, message: str, cls: Any, columns: tuple[str, ...], missing: tuple[str, ...],
                 unexpected: tuple[str, ...], duplicates: tuple[str, ...]) -> None:
        super().__init__(message)
        self.cls = cls
        self.columns = columns
        self.missing = missing
        self.unexpected = unexpected
        self.duplicates = duplicates


class Plan(NamedTuple):
    """How the rows of one column list are passed: values at ``positions``, by keyword ``kwnames``.

    ``kwnames`` is None for ``args_row`` (the whole row, positionally).
    """

    ncols: int
    positions: tuple[int, ...]
    kwnames: tuple[str, ...] | None


def check_extra(extra: Any) -> str:
    # Compared and returned as a plain str: a subclass's __eq__/__hash__ could match either choice.
    if not issubclass(type(extra), str) or str.__str__(extra) not in EXTRA_CHOICES:
        raise ValueError(f"extra must be 'error' or 'ignore', not {extra!r}")
    return EXTRA_CHOICES[EXTRA_CHOICES.index(str.__str__(extra))]


def check_callable(func: Any, what: str) -> None:
    if not callable(func):
        raise TypeError(f"{what}() needs a callable, not {type(func).__name__}")


# -- plans: one per column list --------------------------------------------------------------------


def _show(column: str) -> str:
    cleaned = clean_column_name(column)
    return repr(column) if cleaned == column else f"{column!r} (as {cleaned!r})"


def class_plan(cls: Any, spec: ClassSpec, extra: str, key: tuple[str, ...]) -> Plan:
    """Which column feeds which field; ``ColumnMismatch`` when the columns do not fit ``cls``."""
    declared = {f.name for f in spec.fields}
    by_name: dict[str, list[int]] = {}
    for i, column in enumerate(key):
        by_name.setdefault(clean_column_name(column), []).append(i)
    wanted = [name for name in by_name if name in declared or spec.any_keyword]
    missing = tuple(f.name for f in spec.fields if f.required and f.name not in by_name)
    unexpected = () if extra == "ignore" else tuple(
        key[i] for name, at in by_name.items() if name not in wanted for i in at)
    duplicates = tuple(name for name in wanted if len(by_name[name]) > 1)
    if missing or unexpected or duplicates:
        raise _mismatch(cls, key, by_name, missing, unexpected, duplicates)
    # the class's own name objects (see class_spec), then the columns a **kwargs constructor takes
    order = [f.name for f in spec.fields if f.name in by_name] + [sys.intern(n) for n in wanted if n not in declared]
    order = list(dict.fromkeys(order))  # a name twice (fields renamed after the class was made): one keyword
    return Plan(len(key), tuple(by_name[n][0] for n in order), tuple(order))


def _mismatch(cls: Any, key: tuple[str, ...], by_name: dict[str, list[int]], missing: tuple[str, ...],
              unexpected: tuple[str, ...], duplicates: tuple[str, ...]) -> ColumnMismatch:
    parts = []
    if missing:
        parts.append("missing required field" + ("s " if len(missing) > 1 else " ") + ", ".join(map(repr, missing)))
    if unexpected:
        parts.append("unexpected column" + ("s " if len(unexpected) > 1 else " ")
                     + ", ".join(_show(c) for c in unexpected) + " (extra='ignore' drops them)")
    for name in duplicates:
        parts.append(f"columns {', '.join(repr(key[i]) for i in by_name[name])} all map to field {name!r}")
    message = f"{describe(cls)} cannot be built from columns {list(key)}: " + "; ".join(parts)
    return ColumnMismatch(message, cls, key, missing, unexpected, duplicates)


def kwargs_plan(key: tuple[str, ...]) -> Plan:
    """Keys as ``dict_factory`` gives them: first position of a name, value of its last occurrence."""
    last = {name: i for i, name in enumerate(key)}
    return Plan(len(key), tuple(last.values()), tuple(sys.intern(n) for n in last))


def args_plan(key: tuple[str, ...]) -> Plan:
    return Plan(len(key), tuple(range(len(key))), None)


# -- factory objects: one per (target, extra) --------------------------------------------------------


class FactoryRegistry:
    """The factory made for each (kind, target, extra), so asking twice gives the same object (bounded).

    Targets are told apart by identity (an entry keeps its target alive, so
    its id stays its own): no user ``__hash__``/``__eq__`` runs under the lock.
    """

    def __init__(self, maxsize: int = FACTORY_CACHE_SIZE) -> None:
        self._entries: OrderedDict[tuple, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._maxsize = maxsize

    def get(self, kind: str, target: Any, extra: str, make: Callable[[], Any]) -> Any:
        key = (kind, id(target), extra)
        with self._lock:
            found = self._entries.get(key)
            if found is not None and found[0] is target:
                self._entries.move_to_end(key)
                return found[1]
        factory = make()  # outside the lock: reading a class's signature runs Python code
        with self._lock:
            found = self._entries.get(key)
            if found is not None and found[0] is target:
                return found[1]
            self._entries[key] = (target, factory)
            while len(self._entries) > self._maxsize:
                self._entries.popitem(last=False)
        return factory

    def __len__(self) -> int:
        return len(self._entries)


def describe_factory(kind: str, target: Any, extra: str) -> str:
    if kind == "class":
        return f"class_row({describe(target)}, extra={extra!r})"
    return f"{kind}_row({describe(target)})"


# -- the pure-Python factories -----------------------------------------------------------------------


class TypedRowFactory(Generic[T]):
    """A row factory building ``T`` rows; made by ``class_row``, ``kwargs_row`` or ``args_row``."""

    __pyfactories_factory__ = True

    def __init__(self, kind: str, target: Any, extra: str, spec: ClassSpec | None) -> None:
        self.kind = kind
        self._target = target
        self._extra = extra
        self._spec = spec
        self._plans: Any = ColumnSetCache(self._plan, PLAN_CACHE_SIZE)

    def _plan(self, key: tuple[str, ...]) -> Plan:
        if self.kind == "class":
            assert self._spec is not None
            return class_plan(self._target, self._spec, self._extra, key)
        return kwargs_plan(key) if self.kind == "kwargs" else args_plan(key)

    @property
    def cls(self) -> Any:
        if self.kind != "class":
            raise AttributeError(f"a {self.kind}_row factory has no 'cls' (it calls .func)")
        return self._target

    @property
    def extra(self) -> str:
        if self.kind != "class":
            raise AttributeError(f"a {self.kind}_row factory has no 'extra'")
        return self._extra

    @property
    def func(self) -> Any:
        if self.kind == "class":
            raise AttributeError("a class_row factory has no 'func' (it calls .cls)")
        return self._target

    def __call__(self, colnames: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[T]:
        plan = self._plans.get(column_key(colnames))
        rows = rows_of(rows)
        n, ncols = len(rows), plan.ncols
        for i in range(n):  # every row before the first is built
            row_values(rows[i], i, ncols)
        make, names, positions = self._target, plan.kwnames, plan.positions
        out = []
        for i in range(n):
            # Checked again (rows[i]: IndexError if the list shrank): a constructor may have changed the rows.
            values = tuple(row_values(rows[i], i, ncols))
            if names is None:
                out.append(make(*values))
            else:
                out.append(make(**dict(zip(names, [values[p] for p in positions]))))
        return out

    def _fills_slots(self, colnames: Sequence[str]) -> bool:
        """Never: the direct slot fill is the compiled module's (see ``_typed_fields.direct_fill_fields``)."""
        self._plans.get(column_key(colnames))
        return False

    def _calls_init(self) -> None:
        """Never: calling ``__init__`` directly is the compiled module's (see ``_typed_fields.python_init``)."""
        return None

    def cache_info(self) -> Any:
        """Hits, misses and size of this factory's column-list cache."""
        return self._plans.info()

    def cache_clear(self) -> None:
        self._plans.clear()

    def __repr__(self) -> str:
        return describe_factory(self.kind, self._target, self._extra)


_factories = FactoryRegistry()


def class_row(cls: type[T], *, extra: Literal["error", "ignore"] = "error") -> RowFactory[T]:
    """A row factory building ``cls(field=value, ...)`` per row (see the module docstring)."""
    checked = check_extra(extra)
    spec = class_spec(cls)
    return _factories.get("class", cls, checked, lambda: TypedRowFactory("class", cls, checked, spec))


def kwargs_row(func: Callable[..., T]) -> RowFactory[T]:
    """A row factory building ``func(**row)`` per row, keyed by the column names."""
    check_callable(func, "kwargs_row")
    return _factories.get("kwargs", func, "", lambda: TypedRowFactory("kwargs", func, "", None))


def args_row(func: Callable[..., T]) -> RowFactory[T]:
    """A row factory building ``func(*row)`` per row."""
    check_callable(func, "args_row")
    return _factories.get("args", func, "", lambda: TypedRowFactory("args", func, "", None))
