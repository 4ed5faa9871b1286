"""The query plans of scylla-driver's default load-balancing policy, as ``pyfactories.futures`` follows
them (compiled and pure Python: the ``spec`` fixture), against the policy's own ``make_query_plan`` on
the driver's own metadata, Murmur3 token map and tablets. Collected on scylla-driver only
(``conftest.py``): cassandra-driver's policy is ``test_plans.py``'s."""

from __future__ import annotations

import random

import pytest
from cassandra import ConsistencyLevel
from cassandra.metadata import MAX_LONG, MIN_LONG, Metadata, Murmur3Token, TokenMap
from cassandra.tablets import Tablet, Tablets
from hypothesis import given, settings
from hypothesis import strategies as st

from .planning import POLICY_CASES, hosts_of, token_aware_policy, walk


class Statement:
    """What the policy reads of a statement: its keyspace, table, routing key, consistency and LWT flag."""

    def __init__(self, keyspace, routing_key, table, lwt, consistency_level, truthy=True):
        self.keyspace, self.routing_key, self.table = keyspace, routing_key, table
        self.lwt, self.consistency_level, self.truthy = lwt, consistency_level, truthy

    def is_lwt(self):
        return self.lwt

    def __bool__(self):
        return self.truthy


plans = st.fixed_dictionaries({
    **POLICY_CASES,
    "tokens": st.lists(st.integers(MIN_LONG, MAX_LONG), min_size=1, max_size=6, unique=True),
    "replicas": st.lists(st.lists(st.integers(0, 5), max_size=4), min_size=6, max_size=6),
    "tablets": st.sampled_from(["none", "other table", "empty", "this table"]),
    "token map": st.sampled_from(["built", "not built", "none"]),
    "query": st.one_of(st.none(), st.builds(
        Statement, st.sampled_from([None, "ks", "other"]), st.sampled_from([None, b"key", b"\x00\x01", "text"]),
        st.sampled_from(["t", "u"]), st.booleans(),
        st.sampled_from([ConsistencyLevel.ONE, ConsistencyLevel.QUORUM, ConsistencyLevel.SERIAL]), st.booleans())),
    "working": st.sampled_from([None, "ks"]),
    "take": st.integers(0, 14),
})


def _policy(case):
    hosts = hosts_of(case)
    metadata = Metadata()
    tokens = sorted(Murmur3Token(v) for v in case["tokens"])
    token_map = TokenMap(Murmur3Token, {t: hosts[i % len(hosts)] for i, t in enumerate(tokens)}, tokens, metadata)
    if case["token map"] == "built":
        token_map.tokens_to_hosts_by_ks["ks"] = {
            t: [hosts[i] for i in case["replicas"][n] if i < len(hosts)] for n, t in enumerate(tokens)}
    metadata.token_map = None if case["token map"] == "none" else token_map
    tablet = Tablet(MIN_LONG, MAX_LONG, [(h.host_id, 0) for h in hosts[:2]])
    metadata._tablets = Tablets({("ks", "u"): [tablet]} if case["tablets"] == "other table" else
                                {("ks", "t"): []} if case["tablets"] == "empty" else
                                {("ks", "t"): [tablet]} if case["tablets"] == "this table" else {})

    return token_aware_policy(case, metadata, hosts), metadata


@settings(max_examples=1000)
@given(case=plans)
def test_query_plans_as_the_drivers(spec, case):
    """The same hosts in the same order as scylla-driver's TokenAwarePolicy(DCAwareRoundRobinPolicy), the
    same random numbers drawn, the same round-robin position and calls on the child, however far the plan
    is walked: replicas of a token map built or not, tables with tablets or without, statements that are
    lightweight transactions or serial, keys it cannot hash."""
    seen = []
    for make in (lambda p, ks, q: spec.scylla_plan(p, ks, q, None), lambda p, ks, q: iter(p.make_query_plan(ks, q))):
        policy, metadata = _policy(case)
        random.seed(case["seed"])
        plan = make(policy, case["working"], case["query"])
        seen.append((walk(plan, case["take"]), policy._child_policy._position, policy._child_policy.calls,
                     random.random()))  # (the same draws: the next number)
    assert seen[0] == seen[1]


def test_a_table_without_tablets_is_planned_here(spec):
    """The common request (the driver's own classes, a table without tablets) is planned by the
    compiled plan or the twin's, not handed to the policy."""
    case = {"hosts": [("dc1", True), ("dc1", True)], "local_dc": "dc1", "remote": 0, "tokens": [0, 100],
            "replicas": [[1], [0], [], [], [], []], "tablets": "other table", "token map": "built",
            "working": None, "shuffle": False, "position": 0, "recording": False}
    policy, _ = _policy(case)
    plan = spec.scylla_plan(policy, None, Statement("ks", b"key", "t", False, ConsistencyLevel.ONE), None)
    assert type(plan).__name__ in ("ScyllaTokenAwarePlan", "generator")
    if type(plan).__name__ == "generator":
        assert plan.gi_code.co_name == "token_aware_plan"
    assert [str(h.endpoint) for h in plan] == [str(h.endpoint) for h in policy.make_query_plan(
        None, Statement("ks", b"key", "t", False, ConsistencyLevel.ONE))]


def test_a_host_given_is_the_plan(spec):
    policy, _ = _policy({"hosts": [("dc1", True)], "local_dc": "dc1", "remote": 0, "tokens": [0],
                         "replicas": [[0]] * 6, "tablets": "none", "token map": "built", "shuffle": True,
                         "position": 0, "recording": False})
    host = object()
    assert list(spec.scylla_plan(policy, "ks", None, host)) == [host]


def test_a_policy_whose_plan_is_replaced_plans_its_own(spec):
    policy, _ = _policy({"hosts": [("dc1", True)], "local_dc": "dc1", "remote": 0, "tokens": [0],
                         "replicas": [[0]] * 6, "tablets": "none", "token map": "built", "shuffle": True,
                         "position": 0, "recording": False})
    policy.make_query_plan = lambda working_keyspace=None, query=None: ["mine", working_keyspace]
    assert list(spec.scylla_plan(policy, "ks", None, None)) == ["mine", "ks"]


class Cluster:
    def __init__(self, metadata):
        self.metadata = metadata


class Session:
    def __init__(self, metadata):
        self.cluster = Cluster(metadata)


@settings(max_examples=300)
@given(key=st.one_of(st.none(), st.binary(max_size=40)), token_map=st.sampled_from(["built", "none"]),
       partitioner=st.sampled_from(["org.apache.cassandra.dht.Murmur3Partitioner", None]))
def test_a_requests_routing_token_is_the_drivers(spec, key, token_map, partitioner):
    """The routing key and the token scylla-driver computes once per request (``from_key`` of the token
    map's class): the same type and value, nothing else on the token."""
    _, metadata = _policy({"hosts": [("dc1", True)], "local_dc": "dc1", "remote": 0, "tokens": [0],
                           "replicas": [[0]] * 6, "tablets": "none", "token map": token_map, "shuffle": False,
                           "position": 0, "recording": False})
    metadata.partitioner = partitioner
    statement = Statement("ks", key, "t", False, ConsistencyLevel.ONE)
    routed = []
    for routing in (spec.scylla_routing, _drivers_routing):
        try:
            routing_key, token = routing(Session(metadata), statement)
        except AttributeError as exc:  # (the driver's check of a partitioner not named yet)
            routed.append(repr(exc))
            continue
        routed.append((routing_key, type(token), vars(token) if token is not None else None))
    assert routed[0] == routed[1]


def _drivers_routing(session, query):
    """What scylla-driver's ``_create_response_future`` computes."""
    routing_key, token = query.routing_key, None
    if routing_key is not None:
        metadata = session.cluster.metadata
        if metadata.token_map is not None and metadata.can_support_partitioner():
            token = metadata.token_map.token_class.from_key(routing_key)
    return routing_key, token


def test_a_token_class_changed_makes_its_own_tokens(spec, monkeypatch):
    _, metadata = _policy({"hosts": [("dc1", True)], "local_dc": "dc1", "remote": 0, "tokens": [0],
                           "replicas": [[0]] * 6, "tablets": "none", "token map": "built", "shuffle": False,
                           "position": 0, "recording": False})
    metadata.partitioner = "org.apache.cassandra.dht.Murmur3Partitioner"
    statement = Statement("ks", b"key", "t", False, ConsistencyLevel.ONE)
    drivers = spec.scylla_routing(Session(metadata), statement)[1]
    from cassandra.metadata import HashToken

    def init(self, token):
        self.value, self.seen = token, True

    monkeypatch.setattr(HashToken, "__init__", init)
    token = spec.scylla_routing(Session(metadata), statement)[1]
    assert token.seen and token.value == drivers.value
    monkeypatch.undo()
    metadata.can_support_partitioner = lambda: False
    assert spec.scylla_routing(Session(metadata), statement)[1] is None


@settings(max_examples=300, deadline=None)
@given(key=st.sampled_from([None, b"key"]), keyspace=st.sampled_from([None, "", "ks"]),
       working=st.sampled_from([None, "ks"]), table=st.sampled_from([None, "t", "u"]),
       token=st.sampled_from([None, 5, MAX_LONG]), tablets=st.sampled_from(["none", "empty", "versioned", "unversioned"]),
       seed=st.integers(0, 5))
def test_a_requests_tablet_version_block_is_the_drivers(key, keyspace, working, table, token, tablets, seed):
    """The byte scylla-driver 3.29.12 computes for a request (0, its cached tablet's version, or a random
    byte drawn from ``random`` as the driver draws it) from the compiled steps and the driver's method;
    3.29.11 has no such byte."""
    from cassandra.cluster import Session

    from pyfactories.futures import _futures
    from pyfactories.futures._scylla_py import TABLET_VERSIONS

    if not TABLET_VERSIONS:
        assert not hasattr(Session, "_compute_tablet_version_block")
        with pytest.raises(AttributeError, match="_compute_tablet_version_block"):  # (as the driver's call)
            _futures.tablet_version_block(Session.__new__(Session), None, key, None)
        return
    session = Session.__new__(Session)
    session.keyspace = working
    metadata = Metadata()
    tablet = Tablet(MIN_LONG, MAX_LONG, [("host", 0)])
    if tablets == "versioned":
        tablet.tablet_version = 0x1234
    metadata._tablets = Tablets({} if tablets == "none" else {("ks", "t"): [] if tablets == "empty" else [tablet]})
    session.cluster = Cluster(metadata)
    statement = Statement(keyspace, key, table, False, ConsistencyLevel.ONE)
    routing_token = None if token is None else Murmur3Token(token)
    drawn = []
    for compute in (_futures.tablet_version_block, Session._compute_tablet_version_block):
        random.seed(seed)
        drawn.append((compute(session, statement, key, routing_token), random.random()))
    assert drawn[0] == drawn[1]
