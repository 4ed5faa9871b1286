"""One call turns every part on: ``pyfactories.enable(cluster)`` before ``connect()``, or a session after.

The parts (:data:`PARTS`), each a finer switch of ``enable``:

* ``connection``: our connection class (request timers, compiled framing and dispatch, coalesced writes;
  ``pyfactories.connection``), set on a ``Cluster`` before it connects;
* ``rows``: rows built while decoding (``pyfactories.decoding``);
* ``binds``: prepared statements bound in C (``pyfactories.binding``);
* ``futures``: leaner futures (``pyfactories.futures``).

Every session it enables also gives awaitable requests (``pyfactories.aio``; not a part: it changes no
request, and is on with every driver release pyfactories is tested on, compiled or pure Python).

What can run on the installed driver is decided in ``pyfactories._support``; :func:`status` says, part by
part, what is on and why the rest is off, and ``enable``'s one warning is made of it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from cassandra.cluster import Cluster as DriverCluster
from cassandra.cluster import Session

from . import _support, aio, binding, connection, decoding, futures
from ._sessions import has_own, put_back

if decoding.AVAILABLE:  # its request-init listener sets two fields of each future and keeps nothing of it
    futures.listens_quietly(decoding._routes.RequestRouter)

PARTS = ("connection", "rows", "binds", "futures")
SESSION_PARTS = PARTS[1:]
CALL_BEFORE_CONNECT = "pyfactories.enable(cluster) before cluster.connect() sets it"


@dataclass(frozen=True)
class Part:
    """One part: ``on``, and ``why`` (what runs when it is on, why not when it is off)."""

    name: str
    on: bool
    why: str


class Status(Mapping[str, Part]):
    """Each part of pyfactories on a cluster or a session (a mapping of :data:`PARTS` to :class:`Part`)."""

    def __init__(self, parts: dict[str, Part]) -> None:
        self._parts = parts

    def __getitem__(self, name: str) -> Part:
        return self._parts[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._parts)

    def __len__(self) -> int:
        return len(self._parts)

    @property
    def all_on(self) -> bool:
        return all(part.on for part in self._parts.values())

    def off(self) -> list[Part]:
        return [part for part in self._parts.values() if not part.on]

    def as_dict(self) -> dict[str, dict[str, Any]]:
        return {name: {"on": part.on, "why": part.why} for name, part in self._parts.items()}

    def __str__(self) -> str:
        return "\n".join(f"{p.name:<10} {'on' if p.on else 'off':<3}  {p.why}" for p in self._parts.values())

    def __repr__(self) -> str:
        return f"Status({self.as_dict()!r})"


@dataclass
class _Options:
    rows: str = "named"
    binds: bool = True
    futures: bool = True
    connection: bool = True
    previous_class: Any = None  # the cluster's connection class before ours, while it has not connected


def _turned_off(name: str) -> str:
    return f"turned off (enable(..., {name}=False))"


def _enable_session(session: Session, options: _Options) -> dict[str, str]:
    """Turn the session-level parts of ``options`` on; the reasons of those left off."""
    whys: dict[str, str] = {}
    kept = _support.session_off(session)
    # requests awaitable on every enabled session: under the leaner futures' method, which hands it the
    # requests it does not build (and is put back on top below when it is on)
    futures.uninstall(session)
    if _support.release_off() is None:
        aio.install(session)
    why = _turned_off("rows") if options.rows is None else decoding.turn_on(session, options.rows)
    if why is not None:
        decoding.disable(session)
        whys["rows"] = why
    for name, wanted, off, part in (("binds", options.binds, _support.binds_off, binding),
                                    ("futures", options.futures, _support.futures_off, futures)):
        why = _turned_off(name) if not wanted else kept or off()
        if why is None and part.install(session) is False:
            why = off() or "not supported by this driver"
        if why is not None:
            part.uninstall(session)
            whys[name] = why
    session._pyfactories_whys = whys  # type: ignore[attr-defined]
    return whys


class _EnablingNewSession:
    """A cluster's ``_new_session`` that enables every session the cluster connects (``previous``: the
    cluster object's own before ours, or None for the driver's method)."""

    __slots__ = ("cluster", "previous")

    def __init__(self, cluster: DriverCluster) -> None:
        self.cluster = cluster
        self.previous = cluster.__dict__.get("_new_session")

    def __call__(self, keyspace: Any) -> Session:
        make = self.previous or type(self.cluster)._new_session.__get__(self.cluster)
        session = make(keyspace)
        options = getattr(self.cluster, "_pyfactories", None)
        if options is not None:
            _enable_session(session, options)
        return session


def _check(target: Any, rows: str | None) -> None:
    if not isinstance(target, (DriverCluster, Session)):
        raise TypeError(f"pyfactories.enable takes a cassandra.cluster.Cluster or Session, not {type(target).__name__}")
    if rows is not None and rows not in decoding.ROWS:
        raise ValueError(f"rows must be one of {decoding.ROWS} (or None: off), not {rows!r}")


def enable(target: DriverCluster | Session, *, rows: str | None = "named", binds: bool = True,
           futures: bool = True, connection: bool = True) -> Status:
    """Turn on every part this driver release supports, for ``target`` (see the module's docstring).

    A ``Cluster`` before ``connect()``: its connection class becomes ours, and every session it connects
    gets the other parts. A session (or a cluster already connected): the session-level parts; the
    connection stays the one it was connected with. ``rows``: what requests whose factory is the driver's
    ``named_tuple_factory`` (its default) get, ``"named"`` or ``"dict"`` (None: this part off); the other
    switches turn a part off. Returns :func:`status`; a part asked for and left off is named, with why,
    in one ``RuntimeWarning``.
    """
    _check(target, rows)
    options = _Options(rows, binds, futures, connection)
    if isinstance(target, Session):
        _enable_session(target, options)
        result = status(target, asked=options)
    else:
        _enable_cluster(target, options)
        result = status(target)
    off = [result[name] for name in PARTS if _asked(options, name) and not result[name].on]
    if off:
        warnings.warn("pyfactories: " + "; ".join(f"{p.name} is off: {p.why}" for p in off)
                      + f" (on: {', '.join(n for n in PARTS if result[n].on) or 'nothing'})",
                      RuntimeWarning, stacklevel=2)
    return result


def _asked(options: _Options, name: str) -> bool:
    return options.rows is not None if name == "rows" else bool(getattr(options, name))


def _enable_cluster(cluster: DriverCluster, options: _Options) -> None:
    before: _Options | None = getattr(cluster, "_pyfactories", None)
    options.previous_class = before.previous_class if before is not None else None
    if not cluster._is_setup:
        if options.connection:
            ours, _ = connection.ours_for(cluster.connection_class)
            if ours is not None and ours is not cluster.connection_class:
                options.previous_class = options.previous_class or cluster.connection_class
                cluster.connection_class = ours
        elif options.previous_class is not None:
            cluster.connection_class, options.previous_class = options.previous_class, None
    cluster._pyfactories = options  # type: ignore[attr-defined]
    if not has_own(cluster, "_new_session", _EnablingNewSession):
        cluster._new_session = _EnablingNewSession(cluster)  # type: ignore[method-assign]
    for session in tuple(cluster.sessions):
        _enable_session(session, options)


def disable(target: DriverCluster | Session) -> None:
    """``target`` back on the driver's path: a session's parts; a cluster's sessions, and its connection
    class when it has not connected yet."""
    _check(target, None)
    if isinstance(target, Session):
        decoding.disable(target)
        binding.uninstall(target)
        futures.uninstall(target)
        aio.uninstall(target)
        target._pyfactories_whys = None  # type: ignore[attr-defined]
        return
    options = getattr(target, "_pyfactories", None)
    if options is not None and options.previous_class is not None and not target._is_setup:
        target.connection_class = options.previous_class
    target._pyfactories = None  # type: ignore[attr-defined]
    put_back(target, "_new_session", _EnablingNewSession)
    for session in tuple(target.sessions):
        disable(session)


def _connection_part(cluster: DriverCluster, wanted: bool) -> Part:
    current = cluster.connection_class
    name = getattr(current, "__name__", repr(current))
    if connection.is_ours(current):
        return Part("connection", True, f"{name}: request timers, compiled framing and dispatch, coalesced writes")
    if not wanted:
        return Part("connection", False, _turned_off("connection"))
    ours, why = connection.ours_for(current)
    if why is None and cluster._is_setup:
        why = f"the cluster connected with the driver's {name} before pyfactories.enable: {CALL_BEFORE_CONNECT}"
    elif why is None:
        why = f"the cluster's connection class is the driver's {name}: {CALL_BEFORE_CONNECT}"
    return Part("connection", False, why)


ON = {"rows": "rows built while decoding ({})", "binds": "prepared statements bound in C",
      "futures": "leaner futures for its requests"}


def status(target: DriverCluster | Session, *, asked: _Options | None = None) -> Status:
    """Each part for ``target`` (a ``Cluster`` or a session): on or off, and why."""
    _check(target, None)
    if isinstance(target, Session):
        whys = getattr(target, "_pyfactories_whys", None) or {}
        cluster_options = getattr(target.cluster, "_pyfactories", None)
        wanted = (asked or cluster_options or _Options()).connection
        state = getattr(target, "_pyfactories_fastpath", None)
        on = {"rows": state is not None, "binds": binding.is_installed(target), "futures": futures.is_installed(target)}
        parts = {"connection": _connection_part(target.cluster, wanted)}
        for name in SESSION_PARTS:
            if on[name]:
                parts[name] = Part(name, True, ON[name].format(state[0] if state else ""))
            else:
                parts[name] = Part(name, False, whys.get(name) or "not enabled: pyfactories.enable(session)")
        return Status(parts)
    options = getattr(target, "_pyfactories", None)
    parts = {"connection": _connection_part(target, options.connection if options else True)}
    for name in SESSION_PARTS:
        if options is None:
            parts[name] = Part(name, False, "not enabled: pyfactories.enable(cluster)")
            continue
        why = (_turned_off(name) if not _asked(options, name) else _support.cluster_off(target)
               or {"rows": _support.rows_off, "binds": _support.binds_off, "futures": _support.futures_off}[name]())
        parts[name] = (Part(name, False, why) if why else
                       Part(name, True, ON[name].format(options.rows) + ", for every session it connects"))
    return Status(parts)


class Cluster(DriverCluster):
    """The driver's ``Cluster``, with every part on (``pyfactories.enable(self)``): a drop-in.

    The switches of :func:`enable` (``rows``, ``binds``, ``futures``, ``connection``) are keyword
    arguments here too; every other argument is the driver's.
    """

    def __init__(self, *args: Any, rows: str | None = "named", binds: bool = True, futures: bool = True,
                 connection: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        enable(self, rows=rows, binds=binds, futures=futures, connection=connection)
