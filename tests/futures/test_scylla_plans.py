"""The query plans of scylla-driver's default load-balancing policy, as ``pyfactories.futures`` follows
them (compiled and pure Python: the ``spec`` fixture), against the policy's own ``make_query_plan`` on
the driver's own metadata, Murmur3 token map and tablets. Collected on scylla-driver only
(``conftest.py``): cassandra-driver's policy is ``test_plans.py``'s."""

from __future__ import annotations

import random

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
        seen.append((walk(plan, case["take"]), policy._child_policy._position, policy._child_policy.calls))
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
