"""What the end-to-end benchmark measures side by side: configurations of a row factory and a
connection, and peer drivers.

A configuration's name is what tables and JSON call it:

* ``<factory>``: a registered factory (``profiling.factories``) on the driver's own connection
  class (its ``LibevConnection``), e.g. ``tuple``, ``fastpath_named``;
* ``<factory>+conn``: the same factory on our connection (``Cluster(..., **connection.cluster_options())``:
  ``pyfactories.connection.TimerQueueLibevConnection``), e.g. ``fastpath_named+conn``;
* a peer: another Python driver against the same tables and keys (:data:`PEERS`: ``acsylla``, its
  asyncio API), which has no row factory of ours.

Every ratio is taken against :data:`REFERENCE_CONFIG` (``tuple``: the driver's ``tuple_factory`` on
the driver's connection) in the same round.
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from profiling.factories import REFERENCE

#: The connections a factory can run on: "driver" (the driver's default) and "ours".
CONNECTIONS = ("driver", "ours")
OURS_SUFFIX = "+conn"
#: Peer drivers: name -> (module that must import, workloads it runs, how the tables name its row).
PEERS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "acsylla": ("acsylla", ("single", "single50", "pages", "insert1", "insert50", "insert1000"),
                "acsylla (asyncio API, rows as tuples)"),
}
REFERENCE_CONFIG = REFERENCE


@dataclass(frozen=True)
class Config:
    name: str             # the row's name in tables and JSON
    factory: str | None   # the registered factory (None for a peer)
    connection: str       # "driver", "ours", or the peer's name

    @property
    def peer(self) -> bool:
        return self.factory is None

    def runs(self, workload: str) -> bool:
        """Whether this configuration runs ``workload`` (a peer runs the workloads :data:`PEERS` lists)."""
        return not self.peer or workload in PEERS[self.connection][1]


def parse(name: str, factories: Sequence[str]) -> Config:
    """The configuration ``name`` means; ``factories`` are the usable factory names."""
    if name in PEERS:
        return Config(name, None, name)
    base, ours = (name[: -len(OURS_SUFFIX)], True) if name.endswith(OURS_SUFFIX) else (name, False)
    if base not in factories:
        raise ValueError(f"unknown or unavailable configuration {name!r}; choose a factory of "
                         f"{', '.join(factories)}, one of them followed by {OURS_SUFFIX} (our connection), "
                         f"or a peer: {', '.join(PEERS)}")
    return Config(name, base, "ours" if ours else "driver")


def resolve_all(names: Iterable[str], factories: Sequence[str], connections: Sequence[str] = ("driver",)
                ) -> list[Config]:
    """The reference first, then each of ``names`` (duplicates dropped); with ``connections``
    naming "ours", every factory named also on our connection, after the driver's."""
    unknown = [c for c in connections if c not in CONNECTIONS]
    if unknown or not connections:
        raise ValueError(f"unknown connection(s) {', '.join(unknown) or '(none)'}; choose of {', '.join(CONNECTIONS)}")
    out: list[Config] = []
    for i, name in enumerate([REFERENCE_CONFIG, *names]):
        cfg = parse(name, factories)
        expanded = [cfg]
        if not cfg.peer and cfg.connection == "driver":
            on = dict.fromkeys(connections if i else ["driver", *connections])  # the reference always
            expanded = [Config(cfg.name + OURS_SUFFIX if c == "ours" else cfg.name, cfg.factory, c) for c in on]
        out += [c for c in expanded if c.name not in {o.name for o in out}]
    return out


def ours_unavailable() -> str | None:
    """Why our connection cannot be used in this build and driver (None when it can)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from pyfactories import connection

        options = connection.cluster_options()
    if options:
        return None
    return str(caught[0].message) if caught else "cluster_options() gave no connection class"


def peer_unavailable(peer: str) -> str | None:
    """Why a peer driver cannot run here (None when its module imports)."""
    try:
        importlib.import_module(PEERS[peer][0])
    except ImportError as exc:
        return f"{peer} is not importable ({exc}); install the dev extra (pip install -e '.[dev]')"
    return None


def usable(configs: Sequence[Config]) -> tuple[list[Config], list[str]]:
    """``configs`` without those that cannot run here, and a note for each one left out."""
    kept, notes = [], []
    why_ours = ours_unavailable() if any(c.connection == "ours" for c in configs) else None
    for c in configs:
        why = why_ours if c.connection == "ours" else peer_unavailable(c.connection) if c.peer else None
        if why:
            notes.append(f"`{c.name}` skipped: {why}")
        else:
            kept.append(c)
    return kept, notes


def needs_processes(configs: Sequence[Config]) -> bool:
    """Whether the configurations run in worker processes, one per connection (any but the driver's
    connection asks for it; the driver's then runs in one too, so every row is measured alike)."""
    return any(c.connection != "driver" for c in configs)


def table_rows(section: dict[str, Any], cell: Callable[[dict[str, Any]], str]) -> list[list[str]]:
    """A table row per configuration: its name, its connection, then ``cell(result)`` per case
    ("-" where it did not run)."""
    described = section.get("configurations") or {}
    rows = []
    for name in section["config"]["factories"]:
        conn = described.get(name, {}).get("connection", "driver")
        rows.append([name, conn] + [cell(c["results"][name]) if name in c["results"] else "-"
                                    for c in section.get("cases", [])])
    return rows
