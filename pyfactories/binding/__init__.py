"""Prepared statements bound by pyfactories: the driver's ``BoundStatement``, for less client CPU.

    from pyfactories import binding
    bound = binding.bind(prepared, values)    # == prepared.bind(values), any prepared statement
    pyfactories.enable(session)               # and the statements session.prepare returns bind the same way

``bind`` gives what the driver's ``prepared.bind(values)`` gives (same ``values`` bytes, ``raw_values``,
routing key, consistency levels, fetch size, payload, retry policy; same errors, same messages): see
``pyfactories.binding._binding_py``, its specification.

How a session gets it (``install``): the driver's ``Session._create_response_future`` binds a
``PreparedStatement`` by calling its ``bind``, and so do ``BatchStatement.add`` and applications. So
the statements a session's ``prepare`` returns become instances of :class:`FastBindPreparedStatement`, a
subclass of the driver's ``PreparedStatement`` whose only change is ``bind`` (their ``__class__`` is set:
they stay the objects the driver caches and re-prepares). ``install`` puts a ``prepare`` of its own on
that one session object, which calls the session's ``prepare`` and adopts its result; nothing in the
driver's modules changes, other sessions are untouched, and ``uninstall`` removes it (statements adopted
before keep binding our way, which gives the same statements). A statement of another class (a
subclass of the application's) is left as it is.
"""

from __future__ import annotations

from typing import Any

from cassandra.query import PreparedStatement

from .._impl import COMPILED
from .._sessions import has_own, put_back

if COMPILED:
    from ._binding import bind
else:
    from ._binding_py import bind

__all__ = ["bind", "FastBindPreparedStatement", "adopt", "install", "uninstall", "is_installed"]


class FastBindPreparedStatement(PreparedStatement):
    """The driver's ``PreparedStatement``, bound by :func:`bind`."""

    bind = bind


def adopt(prepared: Any) -> Any:
    """``prepared``, bound by :func:`bind` from now on when it is exactly the driver's ``PreparedStatement``."""
    if type(prepared) is PreparedStatement:
        prepared.__class__ = FastBindPreparedStatement
    return prepared


class _AdoptingPrepare:
    """A session's ``prepare`` that adopts what the one it replaces returns: the application's own ``prepare``
    set on that session object (kept, and put back by ``uninstall``), else the driver's method."""

    __slots__ = ("inner", "previous")

    def __init__(self, session: Any) -> None:
        self.previous = session.__dict__.get("prepare")
        self.inner = session.prepare

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return adopt(self.inner(*args, **kwargs))


def is_installed(session: Any) -> bool:
    return has_own(session, "prepare", _AdoptingPrepare)


def install(session: Any) -> None:
    """Statements ``session.prepare`` returns from now on are bound by :func:`bind` (see the module's docstring)."""
    if not is_installed(session):
        session.prepare = _AdoptingPrepare(session)


def uninstall(session: Any) -> None:
    """``session.prepare`` is what it was before ``install``."""
    put_back(session, "prepare", _AdoptingPrepare)
