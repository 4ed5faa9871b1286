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
plain slotted dataclasses, see ``direct_fill_fields``).
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import threading
import types
from collections import OrderedDict
from typing import Any, Callable, Generic, Literal, NamedTuple, Protocol, Sequence, TypeVar

from ._python import ColumnSetCache, check_rows, column_key
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


class InitField(NamedTuple):
    """A keyword argument the class's constructor takes."""

    name: str
    required: bool


class ClassSpec(NamedTuple):
    """What ``class_row`` needs to know of a class, read once when the factory is made."""

    fields: tuple[InitField, ...]
    any_keyword: bool  # the constructor takes **kwargs: no column is unexpected


class Plan(NamedTuple):
    """How the rows of one column list are passed: values at ``positions``, by keyword ``kwnames``.

    ``kwnames`` is None for ``args_row`` (the whole row, positionally).
    """

    ncols: int
    positions: tuple[int, ...]
    kwnames: tuple[str, ...] | None


# -- field discovery -------------------------------------------------------------------------------


def _describe(obj: Any) -> str:
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if isinstance(qualname, str):
        return f"{module}.{qualname}" if isinstance(module, str) and module != "builtins" else qualname
    return repr(obj)


def _dataclass_fields(cls: type) -> tuple[InitField, ...] | None:
    if not dataclasses.is_dataclass(cls) or not _has_generated_init(cls):
        return None
    every = getattr(cls, "__dataclass_fields__", {})
    initvar_kind = getattr(dataclasses, "_FIELD_INITVAR", None)
    out = []
    for f in every.values():  # declaration order, InitVar pseudo-fields included (they are __init__ arguments)
        if f.init and (f in dataclasses.fields(cls) or getattr(f, "_field_type", None) is initvar_kind):
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            out.append(InitField(f.name, required))
    return tuple(out)


def _has_generated_init(cls: type) -> bool:
    """Whether ``cls.__init__`` is the one ``dataclasses`` wrote (not one the class defines itself)."""
    init = cls.__dict__.get("__init__")
    code = getattr(init, "__code__", None)
    params = getattr(cls, "__dataclass_params__", None)
    return (
        code is not None
        and params is not None
        and params.init
        and getattr(init, "__qualname__", None) == f"{cls.__qualname__}.__init__"
        and code.co_filename.startswith("<")  # made by exec(), not written in a source file
    )


def _attrs_fields(cls: type) -> tuple[InitField, ...] | None:
    attributes = getattr(cls, "__attrs_attrs__", None)
    code = getattr(cls.__dict__.get("__init__"), "__code__", None)
    if attributes is None or code is None or not code.co_filename.startswith("<attrs generated"):
        return None  # not attrs, or an __init__ of the class's own: its signature says what it takes
    nothing = sys.modules["attr"].NOTHING
    out = []
    for a in attributes:
        if a.init:
            name = getattr(a, "alias", None) or a.name.lstrip("_")
            out.append(InitField(name, a.default is nothing))
    return tuple(out)


def _msgspec_fields(cls: type) -> tuple[InitField, ...] | None:
    names = getattr(cls, "__struct_fields__", None)
    defaults = getattr(cls, "__struct_defaults__", None)
    if not isinstance(names, tuple) or not isinstance(defaults, tuple):
        return None
    first_default = len(names) - len(defaults)  # defaults belong to the last fields
    return tuple(InitField(name, i < first_default) for i, name in enumerate(names))


def _namedtuple_fields(cls: type) -> tuple[InitField, ...] | None:
    names = getattr(cls, "_fields", None)
    if not (issubclass(cls, tuple) and isinstance(names, tuple) and hasattr(cls, "_field_defaults")):
        return None
    return tuple(InitField(name, name not in cls._field_defaults) for name in names)


def _signature_spec(target: Any, what: str) -> ClassSpec:
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what}: cannot tell which keyword arguments {_describe(target)} takes ({exc})") from None
    fields = []
    any_keyword = False
    for p in signature.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            any_keyword = True
        elif p.kind is p.POSITIONAL_ONLY:
            if p.default is p.empty:
                raise TypeError(f"{what}: {_describe(target)} needs positional argument {p.name!r}, "
                                "so it cannot be built from keywords (use args_row)")
        elif p.kind is not p.VAR_POSITIONAL:
            fields.append(InitField(p.name, p.default is p.empty))
    return ClassSpec(tuple(fields), any_keyword)


def class_spec(cls: Any) -> ClassSpec:
    """The keyword arguments ``cls`` takes; ``TypeError`` when it is not a class that takes keywords."""
    if not isinstance(cls, type):
        raise TypeError(f"class_row() needs a class, not {type(cls).__name__} (use kwargs_row for a function)")
    for discover in (_dataclass_fields, _attrs_fields, _msgspec_fields, _namedtuple_fields):
        fields = discover(cls)
        if fields is not None:
            return ClassSpec(tuple(InitField(sys.intern(f.name), f.required) for f in fields), False)
    spec = _signature_spec(cls, "class_row()")
    return ClassSpec(tuple(InitField(sys.intern(f.name), f.required) for f in spec.fields), spec.any_keyword)


def check_extra(extra: Any) -> str:
    if not isinstance(extra, str) or extra not in EXTRA_CHOICES:
        raise ValueError(f"extra must be 'error' or 'ignore', not {extra!r}")
    return extra


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
    order = [f.name for f in spec.fields if f.name in by_name] + [n for n in wanted if n not in declared]
    return Plan(len(key), tuple(by_name[n][0] for n in order), tuple(sys.intern(n) for n in order))


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
    message = f"{_describe(cls)} cannot be built from columns {list(key)}: " + "; ".join(parts)
    return ColumnMismatch(message, cls, key, missing, unexpected, duplicates)


def kwargs_plan(key: tuple[str, ...]) -> Plan:
    """Keys as ``dict_factory`` gives them: first position of a name, value of its last occurrence."""
    last = {name: i for i, name in enumerate(key)}
    return Plan(len(key), tuple(last.values()), tuple(sys.intern(n) for n in last))


def args_plan(key: tuple[str, ...]) -> Plan:
    return Plan(len(key), tuple(range(len(key))), None)


# -- the direct slot fill (used by the compiled module only) ---------------------------------------


def direct_fill_fields(cls: Any, plan: Plan) -> tuple[str, ...] | None:
    """The slot names to fill, in ``plan`` order, when building ``cls`` can skip its ``__init__``.

    That is when the constructor would do nothing but store each argument in
    its slot: a dataclass with ``slots=True`` directly under ``object``, not
    frozen, with no metaclass, ``__new__``, ``__setattr__``, ``__post_init__``,
    ``InitVar``, ``default_factory`` or ``init=False`` field, whose ``__init__``
    is the one ``dataclasses`` generated (its code equals the code generated
    for a probe class with the same fields), and every field has a column (so
    no default is involved). Otherwise None: the constructor is called.
    """
    if not (isinstance(cls, type) and type(cls) is type and cls.__bases__ == (object,)
            and dataclasses.is_dataclass(cls) and _has_generated_init(cls)):
        return None
    params = getattr(cls, "__dataclass_params__")
    fields = dataclasses.fields(cls)
    names = tuple(f.name for f in fields)
    slots = cls.__dict__.get("__slots__")
    if (params.frozen or plan.kwnames is None or len(fields) != len(cls.__dataclass_fields__)
            or not isinstance(slots, tuple) or tuple(s for s in slots if s != "__weakref__") != names
            or sorted(plan.kwnames) != sorted(names) or inspect.isabstract(cls)
            or cls.__new__ is not object.__new__ or cls.__setattr__ is not object.__setattr__
            or hasattr(cls, "__post_init__") or cls.__dictoffset__ != 0):
        return None
    for f in fields:
        descriptor = cls.__dict__.get(f.name)
        if (not f.init or f.default_factory is not dataclasses.MISSING
                or type(descriptor) is not types.MemberDescriptorType or descriptor.__objclass__ is not cls):
            return None
    if not _same_code(cls.__dict__["__init__"].__code__, _probe_init(fields).__code__):
        return None
    return plan.kwnames


def _probe_init(fields: Sequence[dataclasses.Field]) -> Any:
    spec = [(f.name, object, dataclasses.field(kw_only=f.kw_only is True)) for f in fields]
    return dataclasses.make_dataclass("probe", spec, slots=True).__dict__["__init__"]


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    return all(getattr(a, attr) == getattr(b, attr) for attr in (
        "co_code", "co_names", "co_varnames", "co_argcount", "co_kwonlyargcount", "co_posonlyargcount",
        "co_consts", "co_flags"))


# -- factory objects: one per (target, extra) --------------------------------------------------------


class FactoryRegistry:
    """The factory made for each (kind, target, extra), so asking twice gives the same object (bounded)."""

    def __init__(self, maxsize: int = FACTORY_CACHE_SIZE) -> None:
        self._entries: OrderedDict[tuple, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._maxsize = maxsize

    def get(self, kind: str, target: Any, extra: str, make: Callable[[], Any]) -> Any:
        key = (kind, target, extra)
        try:
            hash(key)
        except TypeError:  # an unhashable callable: a new factory each time
            return make()
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
        return f"class_row({_describe(target)}, extra={extra!r})"
    return f"{kind}_row({_describe(target)})"


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
        check_rows(rows, plan.ncols)
        make = self._target
        if plan.kwnames is None:
            return [make(*row) for row in rows]
        names, positions = plan.kwnames, plan.positions
        return [make(**dict(zip(names, [row[p] for p in positions]))) for row in rows]

    def _fills_slots(self, colnames: Sequence[str]) -> bool:
        """Never: the direct slot fill is the compiled module's (see ``direct_fill_fields``)."""
        self._plans.get(column_key(colnames))
        return False

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
