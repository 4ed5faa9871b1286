"""A driver ``Session`` scripted for the tests of its ``execute_async`` steps (unit and fuzz): the class's
methods, the state they read, and a ``_create_response_future`` that records its calls."""

from __future__ import annotations

from typing import Any

from cassandra.cluster import Session


class Future:
    """A request future that records what is done with it."""

    def __init__(self, log: list, fails: bool) -> None:
        self.log, self.fails = log, fails

    def send_request(self) -> None:
        self.log.append(("send_request", self._protocol_handler))
        if self.fails:
            raise RuntimeError("no host")


def scripted_session(send_fails: bool = False, created: str = "future") -> Any:
    """Not connected; its futures' ``send_request`` raises with ``send_fails``; ``created``: what
    ``_create_response_future`` gives ("future"), raises ("raise") or gives instead ("not a future")."""
    made = Session.__new__(Session)
    made.log = []
    made.client_protocol_handler = "handler"
    made._request_init_callbacks = []

    def create(*args: Any) -> Any:
        made.log.append(("create", args))
        if created == "raise":
            raise ValueError("cannot bind")
        return Future(made.log, send_fails) if created == "future" else object()

    made._create_response_future = create
    return made
