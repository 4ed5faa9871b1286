"""The one registry of row factories: the profiler, the benchmarks, ``compare`` and the tests
take every list of factories from :data:`FACTORIES`. To add a factory, add one entry there.

Names a user can type wherever a factory is named (``resolve``):

* the registry name: ``tuple``, ``named_tuple``, ``dict``, ``ordered_dict`` (the driver's),
  ``dataclass_handwritten`` (dataclass rows the way users write them with the driver),
  ``cached_named_tuple``, ``pf_dict``, ``pf_ordered_dict``, ``class_row`` (ours), ``fastpath_named``,
  ``fastpath_dict``, ``fastpath_class`` (the fast path), ``py_cached_named_tuple``, ``py_dict``,
  ``py_ordered_dict``, ``py_class_row`` (our pure-Python twins);
* the function's name, ``cached_named_tuple_factory``, or its qualified name,
  ``pyfactories.dict_factory``, ``cassandra.query.dict_factory``;
* ``module:function`` for any importable row factory of your own.

A bare function name that both packages define (``dict_factory``, ``ordered_dict_factory``)
means the driver's, as ``dict`` and ``ordered_dict`` do; ours are ``pyfactories.dict_factory``
(``pf_dict``) and ``pyfactories.ordered_dict_factory`` (``pf_ordered_dict``).
``tuple_factory`` is the same object in both packages.

Dataclass rows (``rows="class"``) are built for any column list by ``profiling.typed``: one slotted
dataclass per column list, the hand-written conversion against ``pyfactories.class_row``.

A factory is applied to a connected ``Session`` whatever way it was configured: through its
default execution profile or, for sessions in legacy mode, ``session.row_factory``. Fast-path
factories set the driver's ``named_tuple_factory`` there (the fast-path dataclass rows: their own
factory) and turn ``pyfactories.decoding`` on; the fast path routes each request by its own row
factory: the driver's default one gets the kind of rows ``enable`` names, ``class_row`` gets plain
decoded tuples to build its rows from. Applying one to a session that had another first undoes
the other, so benchmarks can interleave factories round by round on one session.
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from cassandra.cluster import EXEC_PROFILE_DEFAULT, Session
from cassandra.query import named_tuple_factory

#: The registered families, in the order tables list them (a factory resolved from a user's
#: ``module:function`` is of the family "custom").
DESCRIPTIONS = {
    "driver": "the driver's own (cassandra.query), and dataclass rows as users write them with it",
    "pyfactories": "ours, compiled (pyfactories)",
    "fastpath": "rows built while decoding (pyfactories.decoding)",
    "python": "our pure-Python twins (pyfactories.rows._rows_py)",
}
FAMILIES = tuple(DESCRIPTIONS)


@dataclass(frozen=True)
class Factory:
    name: str                 # the key in tables and JSON
    module: str               # where the row factory lives ...
    attr: str                 # ... and its name there
    family: str               # one of FAMILIES, or "custom"
    rows: str                 # what rows look like: "tuple", "named", "dict", "ordered" or "class"
    short: str                # label of a narrow table column
    label: str                # how a sentence names it
    color: str = "#7f7f7f"
    counterpart: str | None = None  # the driver's factory this one replaces (the "vs." columns)
    twin: str | None = None   # the pure-Python twin of a compiled factory
    extra_aliases: tuple[str, ...] = ()

    @property
    def row_factory(self) -> Callable[[Any, Any], Any]:
        """The callable that builds this factory's rows (``tuple_factory`` for the fast path's named and dict
        rows: they arrive built, and ``apply`` gives the session the driver's ``named_tuple_factory``, which
        the fast path routes to them; the dataclass rows' own factory for the fast path's dataclass rows)."""
        return getattr(importlib.import_module(self.module), self.attr)

    @property
    def fastpath(self) -> str | None:
        """The fast path's kind of decoded rows (``pyfactories.decoding.handler``), for its factories:
        ``named`` or ``dict``, or ``tuple`` for rows a row factory builds from the decoded tuples."""
        if self.family != "fastpath":
            return None
        return self.rows if self.rows in _BUILT_WHILE_DECODING else "tuple"

    @property
    def claims(self) -> tuple[str, ...]:
        """The names that may mean this factory; a bare name two factories claim is the first one's."""
        if self.family == "fastpath":
            return (self.name, *self.extra_aliases)
        return (self.name, self.attr, f"{self.module}.{self.attr}", *self.extra_aliases)

    @property
    def aliases(self) -> list[str]:
        """The other names that mean this factory wherever a factory is named."""
        return [n for n, f in TYPED.items() if f is self and n != self.name]

    @property
    def whole_client(self) -> bool:
        """A configuration of the whole client (:data:`CONFIGURATIONS`), set on the cluster before it
        connects, rather than a row factory a connected session takes."""
        return self.family == CONFIGURATION

    def before_connect(self, cluster: Any) -> None:
        """What a whole-client configuration does to a ``Cluster`` before ``connect()`` (nothing for a
        row factory): ``pyfactories.enable(cluster)``, the README's one call, every part on."""
        if self.whole_client:
            import pyfactories

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a part this build cannot run: status says
                pyfactories.enable(cluster)

    def apply(self, session: Session) -> None:
        """Make ``session`` return rows of this factory from its next query on (a whole-client
        configuration was applied by :meth:`before_connect`: its session is left as it connected)."""
        if self.whole_client:
            return
        if _fastpath_enabled(session):
            import pyfactories

            pyfactories.disable(session)
        if not self.fastpath:
            _set_default_row_factory(session, self.row_factory)
        elif self.fastpath in _BUILT_WHILE_DECODING:
            # the fast path builds these for requests that name the driver's default factory
            _set_default_row_factory(session, named_tuple_factory)
            _enable_session(session, self.fastpath)
        else:
            _set_default_row_factory(session, self.row_factory)
            _enable_session(session, "named")


_BUILT_WHILE_DECODING = ("named", "dict")


def _set_default_row_factory(session: Session, row_factory: Callable[[Any, Any], Any]) -> None:
    if session.cluster._config_mode == _legacy_mode():
        session.row_factory = row_factory
    else:
        session.cluster.profile_manager.profiles[EXEC_PROFILE_DEFAULT].row_factory = row_factory


def _driver(name: str, attr: str, rows: str, short: str, color: str, *extra: str) -> Factory:
    return Factory(name, "cassandra.query", attr, "driver", rows, short, f"driver `{attr}`", color,
                   extra_aliases=extra)


def _ours(name: str, attr: str, rows: str, short: str, color: str, counterpart: str, twin: str) -> Factory:
    label = f"`{attr}`" if rows == "named" else f"our `{attr}`"
    return Factory(name, "pyfactories", attr, "pyfactories", rows, short, label, color, counterpart, twin)


def _twin(of: Factory, color: str) -> Factory:
    assert of.twin
    return Factory(of.twin, "pyfactories.rows._rows_py", of.attr, "python", of.rows, of.short.replace("pf_", "py_"),
                   f"pure-Python `{of.attr}`", color, of.counterpart)


def _fast(rows: str, short: str, color: str, counterpart: str) -> Factory:
    return Factory(f"fastpath_{rows}", "cassandra.query", "tuple_factory", "fastpath", rows, short,
                   f"fast path, {rows} rows", color, counterpart)


_PF_NAMED = _ours("cached_named_tuple", "cached_named_tuple_factory", "named", "pf_named", "#1f77b4", "named_tuple",
                  "py_cached_named_tuple")
_PF_DICT = _ours("pf_dict", "dict_factory", "dict", "pf_dict", "#2ca02c", "dict", "py_dict")
_PF_ODICT = _ours("pf_ordered_dict", "ordered_dict_factory", "ordered", "pf_odict", "#17becf", "ordered_dict",
                  "py_ordered_dict")

_HANDWRITTEN = "dataclass_handwritten"
_DC_HAND = Factory(_HANDWRITTEN, "profiling.typed", "handwritten_dataclass_rows", "driver", "class", "dc_hand",
                   "hand-written `Row(**row._asdict())`", "#bcbd22")
_PF_CLASS = Factory("class_row", "profiling.typed", "dataclass_rows", "pyfactories", "class", "pf_class",
                    "`class_row` (slotted dataclass)", "#1a55a0", _HANDWRITTEN, "py_class_row")
_PY_CLASS = Factory("py_class_row", "profiling.typed", "py_dataclass_rows", "python", "class", "py_class",
                    "pure-Python `class_row`", "#c5b0d5", _HANDWRITTEN)
_FP_CLASS = Factory("fastpath_class", "profiling.typed", "dataclass_rows", "fastpath", "class", "fp_class",
                    "fast path, dataclass rows", "#6a3d9a", _HANDWRITTEN)

#: Every factory, in the order tables list them: the driver's, ours, the fast path, the twins.
FACTORIES: tuple[Factory, ...] = (
    _driver("tuple", "tuple_factory", "tuple", "tuple", "#7f7f7f", "pyfactories.tuple_factory"),
    _driver("named_tuple", "named_tuple_factory", "named", "named", "#d62728"),
    _driver("dict", "dict_factory", "dict", "dict", "#ff7f0e"),
    _driver("ordered_dict", "ordered_dict_factory", "ordered", "odict", "#e377c2"),
    _DC_HAND,
    _PF_NAMED,
    _PF_DICT,
    _PF_ODICT,
    _PF_CLASS,
    _fast("named", "fp_named", "#9467bd", "named_tuple"),
    _fast("dict", "fp_dict", "#8c564b", "dict"),
    _FP_CLASS,
    _twin(_PF_NAMED, "#aec7e8"),
    _twin(_PF_DICT, "#98df8a"),
    _twin(_PF_ODICT, "#9edae5"),
    _PY_CLASS,
)
BY_NAME: dict[str, Factory] = {f.name: f for f in FACTORIES}

#: The family of whole-client configurations: not row factories (the benchmarks, which compare row
#: factories, never see them), but what the profiler also runs wherever a factory is named.
CONFIGURATION = "configuration"
#: The README's one call, ``pyfactories.enable(cluster)`` before ``connect()``: our connection class,
#: named rows built while decoding, compiled binding, leaner futures. Its requests name the driver's
#: default row factory, so it replaces ``named_tuple``.
EVERYTHING_ON = Factory("everything_on", "cassandra.query", "named_tuple_factory", CONFIGURATION, "named", "all_on",
                        "everything on (`pyfactories.enable(cluster)`)", "#2a9d8f", counterpart="named_tuple")
CONFIGURATIONS: dict[str, Factory] = {EVERYTHING_ON.name: EVERYTHING_ON}
#: The reference every ratio is taken against.
REFERENCE = "tuple"
#: The families that are pyfactories' own work.
OURS = ("pyfactories", "fastpath")
#: A colour for names the registry does not know.
OTHER_COLOR = "#7f7f7f"


def _names_typed() -> dict[str, Factory]:
    """Every name a user may type; the first factory to claim a bare name keeps it (the driver's)."""
    out: dict[str, Factory] = {}
    for f in FACTORIES:
        for name in f.claims:
            out.setdefault(name, f)
    return out


TYPED = _names_typed()


def resolve(name: str) -> Factory:
    """A factory by any name a user may type (module docstring), or ``module:function``."""
    if name in TYPED:
        return TYPED[name]
    if name in CONFIGURATIONS:
        return CONFIGURATIONS[name]
    if ":" in name:
        module_name, _, attr = name.partition(":")
        try:
            factory = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"cannot import row factory {name!r}: {exc}") from exc
        if not callable(factory):
            raise ValueError(f"{name!r} is not callable")
        known = next((f for f in FACTORIES if not f.fastpath and f.row_factory is factory), None)
        return known or Factory(name, module_name, attr, "custom", "custom", attr[:12], f"`{name}`")
    raise ValueError(f"unknown factory {name!r}; choose one of {', '.join([*BY_NAME, *CONFIGURATIONS])}, a function name such as "
                     "cached_named_tuple_factory or pyfactories.dict_factory, or module:function")


def of_family(*families: str) -> list[Factory]:
    return [f for f in FACTORIES if f.family in families]


def names(factories: Iterable[Factory]) -> list[str]:
    return [f.name for f in factories]


def grouped(present: Iterable[str]) -> list[str]:
    """``present`` in reading order for "vs." tables: each driver factory followed by what
    replaces it (ours, then the fast path), the pure-Python twins and anything else last."""
    present = set(present)
    order: list[str] = []
    for base in of_family("driver"):
        order.append(base.name)
        order += [f.name for f in FACTORIES if f.counterpart == base.name and f.family in ("pyfactories", "fastpath")]
    order += [f.name for f in FACTORIES if f.name not in order]
    return [n for n in order if n in present] + sorted(present - set(order))


def label(name: str) -> str:
    """A factory's label for narrow columns (its own name when it is not registered)."""
    f = BY_NAME.get(name) or CONFIGURATIONS.get(name)
    return f.short if f else name


def color(name: str) -> str:
    f = BY_NAME.get(name) or CONFIGURATIONS.get(name)
    return f.color if f else OTHER_COLOR


def is_ours(name: str) -> bool:
    """One of pyfactories' own (compiled or fast path): what ``compare`` sums up, charts draw solid."""
    f = BY_NAME.get(name)
    return f is not None and f.family in OURS


def counterpart(name: str) -> str:
    """The driver's factory ``name`` replaces (the reference for one that replaces none)."""
    return BY_NAME[name].counterpart or REFERENCE


def versus(present: Iterable[str]) -> list[str]:
    """Ours among ``present`` whose counterpart is present too, in registry order: the factories
    that get an "a/b" column (how many times faster than what they replace)."""
    present = set(present)
    return [f.name for f in FACTORIES if f.name in present and f.family in OURS and f.counterpart in present]


def versus_label(name: str) -> str:
    """``counterpart/ours`` in short labels, e.g. ``named/pf_named``."""
    return f"{label(counterpart(name))}/{label(name)}"


def registered_among(present: Iterable[str], *families: str) -> list[str]:
    """The registered ones of ``families`` among ``present``, in reading order (:func:`grouped`)."""
    return [n for n in grouped(present) if n in BY_NAME and BY_NAME[n].family in families]


def offline(include_python: bool = True) -> dict[str, Callable[[Any, Any], Any]]:
    """The row factories that work on plain ``(colnames, rows)``: no session, no fast path."""
    families = ("driver", "pyfactories", "python") if include_python else ("driver", "pyfactories")
    return {f.name: f.row_factory for f in of_family(*families)}


def fastpath_status() -> tuple[list[str], str | None]:
    """The fast-path factories usable in this build, or ``([], why not)``."""
    try:
        _fastpath_module()
    except ValueError as exc:
        return [], str(exc)
    return names(of_family("fastpath")), None


def available() -> list[str]:
    """Names whose implementation loads in this build (the fast path may be off)."""
    usable = fastpath_status()[0]
    return [f.name for f in FACTORIES if f.family != "fastpath" or f.name in usable]


def for_sessions() -> list[str]:
    """What the end-to-end benchmark compares: the reference first, then the driver's, ours and
    the fast path when it is usable (the pure-Python twins are left out)."""
    return [n for n in available() if BY_NAME[n].family != "python"]


def describe() -> str:
    """Every factory by family, with its aliases: for ``--help`` and ``list``."""
    lines = []
    for family in FAMILIES:
        entries = [f"{f.name} ({', '.join(f.aliases)})" if f.aliases else f.name for f in of_family(family)]
        lines.append(f"  {DESCRIPTIONS[family]}: " + "; ".join(entries))
    lines.append("  the whole client: " + "; ".join(f"{c.name} ({c.label})" for c in CONFIGURATIONS.values()))
    lines.append("  or module:function for your own. Bare dict_factory/ordered_dict_factory mean the driver's; "
                 "ours are pyfactories.dict_factory/pyfactories.ordered_dict_factory.")
    return "\n".join(lines)


def _legacy_mode() -> Any:
    from cassandra.cluster import _ConfigMode

    return _ConfigMode.LEGACY


def _fastpath_module() -> Any:
    """``pyfactories.decoding`` if it is on in this build; its reason as a ValueError otherwise."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the reason is raised below instead
        fastpath = importlib.import_module("pyfactories.decoding")
    if not fastpath.AVAILABLE:
        raise ValueError(f"the fast path is off in this build: {fastpath.UNAVAILABLE_REASON}")
    return fastpath


def _enable_session(session: Session, rows: str) -> None:
    """``pyfactories.enable(session)``: every part a session has (the connection is its cluster's, chosen
    before it connected): rows built while decoding, compiled binding, leaner futures where they run."""
    import pyfactories

    _fastpath_module()  # a ValueError saying why when the fast path is off in this build
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a part this driver cannot run stays off, as status says
        pyfactories.enable(session, rows=rows, connection=False)


def _fastpath_enabled(session: Session) -> bool:
    try:
        return _fastpath_module().is_enabled(session)
    except ValueError:
        return False
