"""A method of pyfactories' own on one session object (``binding``'s ``prepare``, ``futures``'
``_create_response_future``): an instance attribute, never a change to the driver's class."""

from __future__ import annotations

from typing import Any


def has_own(session: Any, name: str, kind: type) -> bool:
    """Whether ``session.<name>`` is one of ours (an object of class ``kind``)."""
    return type(session.__dict__.get(name)) is kind


def put_back(session: Any, name: str, kind: type) -> None:
    """``session.<name>`` as it was before ours (which keeps it as ``previous``: what the session
    object had of its own, or ``None`` for the class's method)."""
    own = session.__dict__.get(name)
    if type(own) is not kind:
        return
    if own.previous is None:
        delattr(session, name)
    else:
        setattr(session, name, own.previous)
