"""What a class's constructor takes, read once per class for ``class_row``.

Field discovery (dataclasses, attrs, msgspec, NamedTuple, else the
signature) and the two shortcuts of the compiled rows: when building a class
may skip its ``__init__`` altogether (``direct_fill_fields``), and which
Python ``__init__`` calling the class runs (``python_init``).
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import types
from functools import lru_cache
from typing import Any, NamedTuple, Sequence


class InitField(NamedTuple):
    """A keyword argument the class's constructor takes."""

    name: str
    required: bool


class ClassSpec(NamedTuple):
    """What ``class_row`` needs to know of a class, read once when the factory is made."""

    fields: tuple[InitField, ...]
    any_keyword: bool  # the constructor takes **kwargs: no column is unexpected


def describe(obj: Any) -> str:
    """``module.QualName`` of a class or function (for messages and reprs)."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if isinstance(qualname, str):
        return f"{module}.{qualname}" if isinstance(module, str) and module != "builtins" else qualname
    return repr(obj)


def _dataclass_fields(cls: type) -> tuple[InitField, ...] | None:
    if not dataclasses.is_dataclass(cls) or not _has_generated_init(cls):
        return None
    every = getattr(cls, "__dataclass_fields__", {})
    initvar_kind = getattr(dataclasses, "_FIELD_INITVAR", None)
    regular = {id(f) for f in dataclasses.fields(cls)}
    out = []
    for f in every.values():  # declaration order, InitVar pseudo-fields included (they are __init__ arguments)
        if f.init and (id(f) in regular or getattr(f, "_field_type", None) is initvar_kind):
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
    if not isinstance(getattr(cls, "__struct_fields__", None), tuple) or "msgspec" not in sys.modules:
        return None
    # msgspec.structs.fields: __struct_defaults__ may hold NODEFAULT for a kw_only field after a default.
    # The names are the struct's own str objects: msgspec matches keywords by identity first.
    own = {name: name for name in getattr(cls, "__struct_fields__")}
    return tuple(InitField(own.get(f.name, f.name), f.required) for f in sys.modules["msgspec"].structs.fields(cls))


def _namedtuple_fields(cls: type) -> tuple[InitField, ...] | None:
    names = getattr(cls, "_fields", None)
    if not (issubclass(cls, tuple) and isinstance(names, tuple) and hasattr(cls, "_field_defaults")):
        return None
    return tuple(InitField(name, name not in cls._field_defaults) for name in names)


def _signature_spec(target: Any, what: str) -> ClassSpec:
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what}: cannot tell which keyword arguments {describe(target)} takes ({exc})") from None
    fields = []
    any_keyword = False
    for p in signature.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            any_keyword = True
        elif p.kind is p.POSITIONAL_ONLY:
            if p.default is p.empty:
                raise TypeError(f"{what}: {describe(target)} needs positional argument {p.name!r}, "
                                "so it cannot be built from keywords (use args_row)")
        elif p.kind is not p.VAR_POSITIONAL:
            fields.append(InitField(p.name, p.default is p.empty))
    return ClassSpec(tuple(fields), any_keyword)


def class_spec(cls: Any) -> ClassSpec:
    """The keyword arguments ``cls`` takes; ``TypeError`` when it is not a class that takes keywords."""
    if not isinstance(cls, type):
        raise TypeError(f"class_row() needs a class, not {type(cls).__name__} (use kwargs_row for a function)")
    fields = _msgspec_fields(cls)
    if fields is not None:
        return ClassSpec(fields, False)
    # Interned: a Python __init__ matches keywords against its (interned) parameter names by identity first.
    for discover in (_dataclass_fields, _attrs_fields, _namedtuple_fields):
        fields = discover(cls)
        if fields is not None:
            return ClassSpec(tuple(InitField(sys.intern(f.name), f.required) for f in fields), False)
    spec = _signature_spec(cls, "class_row()")
    return ClassSpec(tuple(InitField(sys.intern(f.name), f.required) for f in spec.fields), spec.any_keyword)


# -- the shortcuts of the compiled rows (used by the compiled module only) ---------------------------------------


def direct_fill_fields(cls: Any, kwnames: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The slot names to fill, in ``kwnames`` order (a plan's), when building ``cls`` can skip its ``__init__``.

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
    if any(type(name) is not str for name in names + (kwnames or ())):
        return None  # compared below: a str subclass's __eq__ could make different names look alike
    slots = cls.__dict__.get("__slots__")
    if (params.frozen or kwnames is None or len(fields) != len(cls.__dataclass_fields__)
            or not isinstance(slots, tuple) or tuple(s for s in slots if s != "__weakref__") != names
            or sorted(kwnames) != sorted(names) or inspect.isabstract(cls)
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
    return kwnames


def python_init(cls: type) -> Any:
    """The ``__init__`` that calling ``cls`` runs, when it is a plain Python function (else None).

    The compiled rows then allocate with ``object.__new__`` and call it
    themselves (when ``typed_rows.h`` agrees that this is all ``cls(...)`` does).
    """
    for klass in cls.__mro__:
        if "__init__" in klass.__dict__:
            init = klass.__dict__["__init__"]
            return init if type(init) is types.FunctionType else None
    return None


def _probe_init(fields: Sequence[dataclasses.Field]) -> Any:
    return _probe_init_for(tuple((f.name, f.kw_only is True) for f in fields))


@lru_cache(maxsize=256)
def _probe_init_for(fields: tuple[tuple[str, bool], ...]) -> Any:
    spec = [(name, object, dataclasses.field(kw_only=kw_only)) for name, kw_only in fields]
    return dataclasses.make_dataclass("probe", spec, slots=True).__dict__["__init__"]


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    return all(getattr(a, attr) == getattr(b, attr) for attr in (
        "co_code", "co_names", "co_varnames", "co_argcount", "co_kwonlyargcount", "co_posonlyargcount",
        "co_consts", "co_flags"))
