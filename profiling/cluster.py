"""A cluster to talk to, and the one way to open it: used by the profiler, the benchmarks,
``benchmarks.capture`` and the test fixtures.

    with reach(args.hosts, args.port) as contact:   # hosts given, else PYFACTORIES_HOSTS, else the local node
        cluster, session = connect(contact, row_factory=tuple_factory)

``reach`` starts the project's local node only when no hosts are named and none is running,
and then stops it when the block ends; a node someone else started, or a cluster of the
user's own, is left as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from . import node


@dataclass(frozen=True)
class Contact:
    """Where a cluster answers: contact points and CQL port."""

    hosts: list[str]
    port: int
    local: bool = False  # the project's local node(s), whose processes this machine can see (and pin)

    def __str__(self) -> str:
        return f"{','.join(self.hosts)}:{self.port}"


def parse_hosts(hosts: str | Sequence[str] | None) -> list[str]:
    """``"h1, h2"`` or ``["h1", "h2"]`` -> ``["h1", "h2"]``; None or empty -> ``[]``."""
    items = hosts.split(",") if isinstance(hosts, str) else list(hosts or [])
    return [h.strip() for h in items if h.strip()]


@contextmanager
def reach(hosts: str | Sequence[str] | None = None, port: int | None = None, *, nodes: int = 1,
          say: Callable[[str], None] = print) -> Iterator[Contact]:
    """A cluster for the block: ``hosts`` if given (nothing started), else ``PYFACTORIES_HOSTS``,
    else the local node, started (and stopped at the end) only if it was not running."""
    named = parse_hosts(hosts)
    if named:
        yield Contact(named, port or node.port())
        return
    started, found = node.ensure_up(nodes=nodes)
    try:
        yield Contact(found, port or node.port(), local=not node.external_hosts())
    finally:
        if started:
            say("stopping the node this run started")
            node.stop()


def profile(**kwargs: Any) -> Any:
    """An ``ExecutionProfile`` with the driver's default load balancing spelled out (the driver
    warns about a profile without one)."""
    from cassandra.cluster import ExecutionProfile, default_lbp_factory

    kwargs.setdefault("load_balancing_policy", default_lbp_factory())
    return ExecutionProfile(**kwargs)


def open_cluster(contact: Contact, *, legacy: bool = False, profiles: dict[Any, Any] | None = None,
                 **options: Any) -> Any:
    """A ``Cluster`` for ``contact``, not yet connected.

    ``options`` are ``Cluster`` keyword arguments, except ``row_factory`` and ``request_timeout``,
    which go to the default execution profile (made with :func:`profile`); ``profiles`` adds
    named ones. ``legacy=True`` leaves execution profiles out (``session.row_factory`` era).
    """
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster

    default = {k: v for k in ("row_factory", "request_timeout") if (v := options.pop(k, None)) is not None}
    if legacy:
        if default or profiles:
            raise ValueError("a cluster in legacy mode has no execution profiles: set session.row_factory instead")
    else:
        options["execution_profiles"] = {EXEC_PROFILE_DEFAULT: profile(**default), **(profiles or {})}
    return Cluster(list(contact.hosts), port=contact.port, **options)


def connect(contact: Contact, keyspace: str | None = None, **options: Any) -> tuple[Any, Any]:
    """``(cluster, session)``: :func:`open_cluster` with ``options``, connected (to ``keyspace``).
    The cluster is shut down again if connecting fails."""
    cluster = open_cluster(contact, **options)
    try:
        return cluster, cluster.connect(keyspace)
    except BaseException:
        cluster.shutdown()
        raise
