"""The README's quick start against the real node: one call before ``connect()`` turns every part on for
every session the cluster connects; on a session already connected it does what it can and says why the
rest is off; ``disable`` puts the driver's path back; the deprecated names still work."""

from __future__ import annotations

import warnings

import pytest
from cassandra.cluster import Cluster
from cassandra.query import named_tuple_factory

import pyfactories
from pyfactories import binding, connection, decoding, futures

pytestmark = pytest.mark.integration

QUERY = "SELECT key, cluster_name FROM system.local WHERE key = ?"


def quick_start(contact, **switches):
    cluster = Cluster(list(contact.hosts), port=contact.port)
    pyfactories.enable(cluster, **switches)
    return cluster, cluster.connect()


def rows_of(session):
    prepared = session.prepare(QUERY)
    return session.execute(prepared, ["local"]).one(), session.execute_async(QUERY.replace("?", "'local'")).result().one()


def test_the_quick_start_turns_every_part_on_for_every_session(contact):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cluster, session = quick_start(contact)
    try:
        second = cluster.connect()
        for s in (session, second):
            status = pyfactories.status(s)
            assert status.all_on, str(status)
            assert decoding.is_enabled(s) and binding.is_installed(s) and futures.is_installed(s)
            assert connection.is_ours(s.cluster.connection_class)
            by_prepared, by_text = rows_of(s)
            assert type(by_prepared).__name__ == "Row" and by_prepared._fields == ("key", "cluster_name")
            assert by_prepared == by_text and by_prepared.key == "local"
            assert type(s.execute_async("SELECT key FROM system.local")).__name__ == "LeanResponseFuture"
    finally:
        cluster.shutdown()


def test_rows_are_the_drivers_rows(contact):
    cluster, fast = quick_start(contact, rows="dict")
    plain = Cluster(list(contact.hosts), port=contact.port)
    try:
        driver = plain.connect()
        query = "SELECT keyspace_name, table_name, column_name, kind, position FROM system_schema.columns"
        from cassandra.query import dict_factory

        driver.row_factory = dict_factory
        assert list(fast.execute(query)) == list(driver.execute(query))
        assert pyfactories.status(fast)["rows"].why == "rows built while decoding (dict)"
    finally:
        cluster.shutdown()
        plain.shutdown()


def test_a_session_already_connected_gets_what_can_still_be_done_and_hears_why_not_the_rest(contact):
    cluster = Cluster(list(contact.hosts), port=contact.port)
    try:
        session = cluster.connect()
        with pytest.warns(RuntimeWarning) as caught:
            status = pyfactories.enable(session)
        assert len(caught) == 1 and "connection is off: the cluster connected with the driver's LibevConnection" \
            in str(caught[0].message) and "(on: rows, binds, futures)" in str(caught[0].message)
        assert [p.name for p in status.off()] == ["connection"]
        assert rows_of(session)[0].key == "local"
        pyfactories.disable(session)
        status = pyfactories.status(session)
        assert not any(p.on for p in status.values())
        assert status["rows"].why == "not enabled: pyfactories.enable(session)"
        assert type(session.execute_async("SELECT key FROM system.local")).__name__ == "ResponseFuture"
        assert rows_of(session)[0].key == "local"
    finally:
        cluster.shutdown()


def test_enabling_a_connected_cluster_enables_its_sessions_and_the_next(contact):
    cluster = Cluster(list(contact.hosts), port=contact.port)
    try:
        first = cluster.connect()
        with pytest.warns(RuntimeWarning, match="connection is off"):
            pyfactories.enable(cluster, futures=False)
        second = cluster.connect()
        for s in (first, second):
            status = pyfactories.status(s)
            assert [p.name for p in status.off()] == ["connection", "futures"], str(status)
            assert status["futures"].why == "turned off (enable(..., futures=False))"
        pyfactories.disable(cluster)
        assert not decoding.is_enabled(first) and not decoding.is_enabled(second)
        assert not decoding.is_enabled(cluster.connect())
    finally:
        cluster.shutdown()


def test_the_drop_in_cluster(contact):
    cluster = pyfactories.Cluster(list(contact.hosts), port=contact.port)
    try:
        session = cluster.connect()
        assert pyfactories.status(session).all_on and rows_of(session)[0].key == "local"
    finally:
        cluster.shutdown()


def test_the_deprecated_two_switches_still_work(contact):
    from pyfactories import fastpath

    with pytest.warns(DeprecationWarning, match=r"use pyfactories.enable\(cluster\) before cluster.connect\(\)"):
        options = fastpath.cluster_options()
    cluster = Cluster(list(contact.hosts), port=contact.port, **options)
    try:
        session = cluster.connect()
        session.row_factory = named_tuple_factory
        with pytest.warns(DeprecationWarning, match=r"use pyfactories.enable\(session\)"):
            assert fastpath.enable(session, rows="named") is True
        assert pyfactories.status(session).all_on
        with pytest.warns(DeprecationWarning, match=r"use pyfactories.disable\(session\)"):
            fastpath.disable(session)
        assert not decoding.is_enabled(session) and not binding.is_installed(session)
    finally:
        cluster.shutdown()
