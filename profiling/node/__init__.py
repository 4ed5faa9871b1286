"""A real Apache Cassandra 5.0 on loopback, for tests and benchmarks (stdlib only).

Command line: ``python -m profiling.node {fetch,up,down,status,log,nodetool,wipe}``.

Importable API: ``ensure_up``, ``stop``, ``port``, ``server_pids``, ``exit_watch``; the profiler, the
benchmarks and the tests reach a cluster through ``profiling.cluster.reach``, which uses them.

``PYFACTORIES_HOSTS=h1,h2`` (and ``PYFACTORIES_PORT``) selects a cluster of the
user's own: ``ensure_up`` then starts nothing and returns those hosts.
Other knobs: ``PYFACTORIES_CACHE`` (jars and node data, default
``<repo>/.cache/cassandra``), ``PYFACTORIES_HEAP``, ``JAVA_HOME``; a second cluster beside the
first: ``PYFACTORIES_NODES_DIR`` (its folder) and ``PYFACTORIES_FIRST_ADDRESS`` (node 1's
loopback address, e.g. 127.0.0.5).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from . import config, server
from .config import Node
from .fetch import NodeError

__all__ = ["NodeError", "ensure_up", "stop", "external_hosts", "port", "fetch", "server_pids", "exit_watch"]


def external_hosts() -> list[str]:
    """Hosts from ``PYFACTORIES_HOSTS`` (comma-separated); empty if unset."""
    return [h.strip() for h in os.environ.get("PYFACTORIES_HOSTS", "").split(",") if h.strip()]


def port() -> int:
    """CQL port to connect to: ``PYFACTORIES_PORT`` for an external cluster, else 9042."""
    if external_hosts():
        return int(os.environ.get("PYFACTORIES_PORT", config.CQL_PORT))
    return config.CQL_PORT


def ensure_up(nodes: int = 1, *, heap: str | None = None,
              timeout: float = config.START_TIMEOUT, quiet: bool = False) -> tuple[bool, list[str]]:
    """Make sure a cluster of at least ``nodes`` local nodes answers CQL.

    Returns ``(started, hosts)``: ``started`` is True only if this call started
    a node, so the caller knows whether to ``stop()`` afterwards.  With
    ``PYFACTORIES_HOSTS`` set nothing is started and those hosts are returned.
    Raises NodeError (with the log tail in its message) if a node fails.
    """
    hosts = external_hosts()
    if hosts:
        return False, hosts
    say = (lambda _msg: None) if quiet else print
    started, running = server.up(nodes, heap, timeout, say)
    return bool(started), [n.address for n in running]


def stop(nodes: list[int] | None = None, *, timeout: float = 30.0, quiet: bool = False) -> list[int]:
    """Stop local nodes (all, or the given indices) by their saved PIDs.

    Only processes whose command line is this tool's CassandraDaemon for that
    node are signalled.  Returns the indices of the nodes that were stopped.
    """
    say = (lambda _msg: None) if quiet else print
    targets = None if nodes is None else [Node(i) for i in nodes]
    return [n.index for n in server.down(targets, timeout, say)]


def server_pids() -> list[int]:
    """PIDs of the local nodes running now (as last configured by ``up``); empty for external hosts."""
    if external_hosts():
        return []
    count = config.load_state().get("nodes", 0)
    pids = (server.running_pid(Node(i)) for i in range(1, count + 1))
    return [pid for pid in pids if pid is not None]


def exit_watch() -> Callable[[], str | None]:
    """A check that says which of the local nodes running now has exited since, and why (the last
    lines of its output); ``None`` while all run, and always for external hosts."""
    if external_hosts():
        return lambda: None
    return server.exit_watch()


def fetch(quiet: bool = False) -> str:
    """Download the Cassandra jars once; return the folder holding them."""
    return str(server.fetch_locked((lambda _msg: None) if quiet else print))
