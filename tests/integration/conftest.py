"""Fixtures of the integration suite: one real Cassandra node per test session, the keyspace
``pyfactories_it`` and its rows, and the clusters/sessions the tests read through.

The node comes from the ``contact`` fixture of ``tests/conftest.py``; every cluster is opened with
``profiling.cluster.open_cluster``.

Every test module here sets ``pytestmark = pytest.mark.integration``; collection refuses one that
does not, so ``-m "not integration"`` really leaves the whole suite out.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from cassandra.cluster import Cluster, ExecutionProfile

from profiling.cluster import Contact, open_cluster
from profiling.cluster import profile as _profile
from pyfactories import decoding

from .support import (
    BIG_INSERT,
    BIG_ROWS,
    DATA,
    KS,
    SCHEMA,
    SCHEMA_DIGEST,
    Address,
    Source,
    Target,
    factories,
    statements,
)

HERE = Path(__file__).resolve().parent
PROTOCOL = 5


def pytest_collection_modifyitems(config, items):
    unmarked = [
        item.nodeid
        for item in items
        if item.path.resolve().is_relative_to(HERE) and item.get_closest_marker("integration") is None
    ]
    if unmarked:
        raise pytest.UsageError(
            "tests under tests/integration must be marked integration (pytestmark = pytest.mark.integration): "
            + ", ".join(unmarked)
        )


def profile(row_factory=None, request_timeout=None) -> ExecutionProfile:
    """An ExecutionProfile with the driver's default load balancing spelled out (the driver logs otherwise)."""
    return _profile(**({"row_factory": row_factory} if row_factory is not None else {}),
                    **({"request_timeout": request_timeout} if request_timeout is not None else {}))


#: The shared sessions' request timeout: both sides of a comparison get it, and a node slowed for a
#: while by the rest of the machine's work (several test processes, builds beside them) is waited for
#: instead of failing every test of a module at its fixture (the driver's default is 10 s).
SESSION_TIMEOUT_S = 60.0


class Clusters:
    """Creates clusters and sessions on demand, keeps them while this package runs, then shuts them all down.

    Every cluster registers ``Address`` for the UDT ``address_cls``: which Python class a UDT decodes to
    is global state in the driver (``UserType.mapped_class``), so all the clusters of this process
    must agree on it, or the driver's own results would depend on which cluster decoded last.
    """

    def __init__(self, contact: Contact) -> None:
        self.contact = contact
        self._clusters: list[Cluster] = []
        self._cache: dict = {}

    def cluster(self, protocol: int = PROTOCOL, *, row_factory=None, profiles: dict | None = None,
                legacy: bool = False, **kwargs) -> Cluster:
        """A new Cluster (shut down with the others at the end, or by the caller)."""
        cluster = open_cluster(self.contact, legacy=legacy, profiles=profiles, row_factory=row_factory,
                               protocol_version=protocol, **kwargs)
        cluster.register_user_type(KS, "address_cls", Address)
        self._clusters.append(cluster)
        return cluster

    def _cached(self, key, make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def shared_cluster(self, protocol: int, mode: str, fid: str | None = None) -> Cluster:
        if mode == "profile":
            profiles = {name: profile(f, SESSION_TIMEOUT_S) for name, f in factories().items()}
            return self._cached(("cluster", "profile", protocol),
                                lambda: self.cluster(protocol, profiles=profiles, request_timeout=SESSION_TIMEOUT_S))
        if mode == "default":
            f = factories()[fid]
            return self._cached(("cluster", "default", protocol, fid),
                                lambda: self.cluster(protocol, row_factory=f, request_timeout=SESSION_TIMEOUT_S))
        if mode == "legacy":
            return self._cached(("cluster", "legacy", protocol), lambda: self.cluster(protocol, legacy=True))
        raise ValueError(mode)

    def target(self, protocol: int, mode: str, fid: str) -> Target:
        """Rows of factory ``fid`` (``driver.named``, ``c.dict``, ...) configured the ``mode`` way:
        ``profile`` (a named ExecutionProfile per execute), ``default`` (the cluster's default
        ExecutionProfile) or ``legacy`` (``session.row_factory``)."""

        def make() -> Target:
            cluster = self.shared_cluster(protocol, mode, fid)
            session = cluster.connect()
            if mode == "profile":
                return Target(session, {"execution_profile": fid})
            if mode == "legacy":
                session.row_factory = factories()[fid]
                session.default_timeout = SESSION_TIMEOUT_S
            return Target(session)

        return self._cached(("target", protocol, mode, fid), make)

    def driver(self, protocol: int, kind: str) -> Target:
        """The reference: the driver's own factory ``kind`` on the driver's decode path."""
        return self.target(protocol, "profile", f"driver.{kind}")

    def fast_target(self, protocol: int, config: str, rows: str) -> Target:
        """A session with the fast path on (``rows`` = named or dict), configured as ``FAST_CONFIGS`` says."""

        def make() -> Target:
            if config == "default":
                session = self.shared_cluster(protocol, "default", "driver.named").connect()
            elif config == "profile":
                session = self.shared_cluster(protocol, "default", f"c.{rows}").connect()
            elif config == "legacy":
                session = self.shared_cluster(protocol, "legacy").connect()
                session.row_factory = factories()[f"py.{rows}"]
            else:
                raise ValueError(config)
            if config == "legacy":
                session.default_timeout = SESSION_TIMEOUT_S
            assert decoding.enable(session, rows=rows) is True
            return Target(session)

        return self._cached(("fast", protocol, config, rows), make)

    def shutdown(self, cluster: Cluster) -> None:
        cluster.shutdown()
        self._clusters.remove(cluster)

    def close(self) -> None:
        while self._clusters:
            self._clusters.pop().shutdown()


class Schema:
    """The keyspace's tables are created and filled once; ``counters`` gets keys of its own per run."""

    def __init__(self, session) -> None:
        self.session = session
        run = uuid.uuid4().int
        self.run = f"{run:032x}"[:12]
        # Counter cells cannot be reset: each run counts under fresh keys.
        self.counters = Source("counters", "k", ((run >> 66) + 1, -((run >> 67) + 1)))

    def create(self) -> None:
        s = self.session
        s.execute(f"CREATE KEYSPACE IF NOT EXISTS {KS} WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute(f"CREATE TABLE IF NOT EXISTS {KS}.suite_schema (id int PRIMARY KEY, digest text)")
        row = s.execute(f"SELECT digest FROM {KS}.suite_schema WHERE id = 0").one()
        if row is None or row.digest != SCHEMA_DIGEST:
            if row is not None:  # made by another version of this suite: start over
                s.execute(f"DROP KEYSPACE {KS}")
                self.create()
                return
            for cql in statements(SCHEMA) + statements(DATA):
                s.execute(cql)
            s.execute(f"INSERT INTO {KS}.suite_schema (id, digest) VALUES (0, %s)", (SCHEMA_DIGEST,))
        for row in BIG_ROWS:
            s.execute(BIG_INSERT.replace("{ks}", KS), row)
        plus, minus = self.counters.keys
        s.execute(f"UPDATE {KS}.counters SET c = c + 5 WHERE k = {plus}")
        s.execute(f"UPDATE {KS}.counters SET c = c - 3 WHERE k = {minus}")

    def key(self, label: str = "") -> str:
        """A text key nobody else uses (LWT rows, table names)."""
        return f"{label}{self.run}_{uuid.uuid4().hex[:8]}"


# The clients live as long as this package's tests (their threads are gone before other tests run);
# the node lives as long as the test session.


@pytest.fixture(scope="package")
def clusters(contact, schema):
    registry = Clusters(contact)
    yield registry
    registry.close()


@pytest.fixture(scope="package")
def schema(contact):
    """Creates ``pyfactories_it`` (RF=1) with its types, tables and rows, once per test session."""
    admin = open_cluster(contact, protocol_version=PROTOCOL)
    try:
        created = Schema(admin.connect())
        created.create()
    finally:
        admin.shutdown()
    return created


@pytest.fixture(scope="package")
def cluster(clusters):
    """A protocol v5 Cluster with the default execution profile (the driver's named_tuple_factory)."""
    return clusters.cluster(PROTOCOL)


@pytest.fixture(scope="package")
def session(cluster):
    return cluster.connect(KS)
