"""The query plans and replicas of ``pyfactories.futures`` (compiled and pure Python: the ``spec``
fixture), against the driver's default load-balancing policy and token map: cassandra-driver's, the one
they follow (scylla-driver's policy, which knows tablets, plans its own requests)."""

from __future__ import annotations

import pytest
from cassandra.metadata import MAX_LONG, MIN_LONG, Murmur3Token, Token
from hypothesis import given, settings
from hypothesis import strategies as st

from .planning import POLICY_CASES, hosts_of, token_aware_policy, walk


class Metadata:
    """The cluster metadata a TokenAwarePolicy asks: replicas per (keyspace, routing key)."""

    def __init__(self, replicas, kind=list):
        self.replicas, self.kind = replicas, kind
        self.asked = []

    def get_replicas(self, keyspace, key):
        self.asked.append((keyspace, key))
        return self.kind(self.replicas)  # a new one each time: shuffling one leaves the next as it was


class Statement:
    def __init__(self, keyspace, routing_key, truthy=True):
        self.keyspace, self.routing_key, self.truthy = keyspace, routing_key, truthy

    def __bool__(self):
        return self.truthy


plans = st.fixed_dictionaries({
    **POLICY_CASES,
    "replicas": st.lists(st.integers(0, 5), max_size=4),
    "query": st.one_of(st.none(), st.builds(Statement, st.sampled_from([None, "ks"]),
                                             st.sampled_from([None, b"key"]), st.booleans())),
    "working": st.sampled_from([None, "w"]),
    "take": st.integers(0, 8),
    "kind": st.sampled_from([list, tuple]),  # a list is walked by index, anything else by its iterator
})


def _policy(case):
    hosts = hosts_of(case)
    replicas = [hosts[i] for i in case["replicas"] if i < len(hosts)]
    metadata = Metadata(replicas, case.get("kind", list))
    return token_aware_policy(case, metadata, hosts), metadata


@settings(max_examples=1000)
@given(case=plans)
def test_query_plans_as_the_drivers(spec, case):
    """The same hosts in the same order as the driver's TokenAwarePolicy(DCAwareRoundRobinPolicy), the
    same calls on its metadata and the same round-robin position, however far the plan is walked."""
    import random

    seen = []
    for make in (spec.query_plan, lambda p, ks, q: iter(p.make_query_plan(ks, q))):
        policy, metadata = _policy(case)
        random.seed(case["seed"])
        plan = make(policy, case["working"], case["query"])
        assert metadata.asked == []  # nothing before the first host is asked for
        seen.append((walk(plan, case["take"]), metadata.asked, policy._child_policy._position,
                     policy._child_policy.calls, random.random()))  # (the same draws: the next number)
    assert seen[0] == seen[1]


def test_other_policies_plan_as_they_do(spec):
    from cassandra.policies import RoundRobinPolicy

    class Policy(RoundRobinPolicy):
        def make_query_plan(self, working_keyspace=None, query=None):
            return [working_keyspace, query]

    assert list(spec.query_plan(Policy(), "ks", "q")) == ["ks", "q"]


class OddToken(Token):
    """A token of another class in a Murmur3 ring: the ring is the driver's to search."""


class Value(int):
    """A token value that is not exactly an int: compared by the driver, with its own ``<``."""

    def __lt__(self, other):
        return int(self) > int(other)


rings = st.fixed_dictionaries({
    "values": st.lists(st.integers(MIN_LONG, MAX_LONG), min_size=0, max_size=12, unique=True),
    "keys": st.lists(st.one_of(st.binary(max_size=12), st.just(b"\x00"), st.text(max_size=3)), min_size=1, max_size=6),
    "keyspace": st.sampled_from(["ks", "other", None]),
    "built": st.booleans(),
    "lie": st.sampled_from([None, "token", "value", "ring", "map"]),
    "plain": st.booleans(),
})


def _token_map(case):
    from cassandra.connection import DefaultEndPoint
    from cassandra.metadata import Metadata, TokenMap
    from cassandra.policies import SimpleConvictionPolicy
    from cassandra.pool import Host

    metadata = Metadata()
    tokens = sorted(Murmur3Token(v) for v in case["values"])
    hosts = [Host(DefaultEndPoint(f"127.0.0.{i + 1}"), SimpleConvictionPolicy) for i in range(len(tokens))]
    token_map = TokenMap(Murmur3Token, dict(zip(tokens, hosts)), tokens, metadata)
    if case["built"]:
        token_map.tokens_to_hosts_by_ks["ks"] = {t: [h, hosts[0]] for t, h in zip(tokens, hosts)}
    if tokens and case["lie"] == "token":
        tokens[len(tokens) // 2] = OddToken(tokens[len(tokens) // 2].value)
    elif tokens and case["lie"] == "value":
        tokens[len(tokens) // 2].value = Value(tokens[len(tokens) // 2].value)
    elif case["lie"] == "ring":
        token_map.ring = tuple(tokens)
    elif case["lie"] == "map" and case["built"]:
        token_map.tokens_to_hosts_by_ks["ks"] = {t: (h,) for t, h in zip(tokens, hosts)}
    metadata.token_map = token_map if case["plain"] or tokens else None
    return metadata


@settings(max_examples=500)
@given(case=rings)
def test_replicas_as_the_drivers(spec, case):
    """The driver's own Metadata and Murmur3 token map: the same replicas (the same list object) or
    the same error as ``Metadata.get_replicas``, for any ring, key and keyspace, built or not, with
    tokens, values, rings and maps that are not the driver's types."""
    def outcome(get):
        metadata = _token_map(case)
        found = []
        for key in case["keys"]:
            try:
                found.append(get(metadata, key))
            except Exception as exc:  # noqa: BLE001 (the driver's own error, compared)
                found.append(type(exc).__name__)
        return found, metadata

    ours, ours_metadata = outcome(lambda m, key: spec.get_replicas(m, case["keyspace"], key))
    theirs, their_metadata = outcome(lambda m, key: m.get_replicas(case["keyspace"], key))
    assert [_hosts(r) for r in ours] == [_hosts(r) for r in theirs]
    if ours_metadata.token_map is not None:  # a map built by the call is built alike
        assert set(ours_metadata.token_map.tokens_to_hosts_by_ks) == set(their_metadata.token_map.tokens_to_hosts_by_ks)


def _hosts(found):
    return found if isinstance(found, str) else (type(found).__name__, [str(h.endpoint) for h in found])


def test_replicas_are_the_maps_own_list(spec):
    """Shuffling what it answers shuffles the map's list, as with the driver's (the policy relies on it)."""
    metadata = _token_map({"values": [-5, 7, 100], "built": True, "lie": None, "plain": True})
    lists = set(map(id, metadata.token_map.tokens_to_hosts_by_ks["ks"].values()))
    for key in (b"a", b"b", b"c", b"d"):
        found = spec.get_replicas(metadata, "ks", key)
        assert id(found) in lists and found is metadata.get_replicas("ks", key)


def _changed_classes():
    from cassandra.metadata import Metadata, TokenMap

    def value_negated(monkeypatch):
        monkeypatch.setattr(Murmur3Token, "value", property(
            lambda self: -self.__dict__["value"], lambda self, v: self.__dict__.__setitem__("value", v)),
            raising=False)

    theirs = ["theirs"]
    return {
        "a value property": value_negated,
        "Token.__lt__": lambda mp: mp.setattr(Token, "__lt__", lambda self, other: self.value > other.value),
        "Murmur3Token.__init__": lambda mp: mp.setattr(
            Murmur3Token, "__init__", lambda self, token: setattr(self, "value", token // 2)),
        "Murmur3Token.hash_fn": lambda mp: mp.setattr(Murmur3Token, "hash_fn", classmethod(lambda cls, key: 0)),
        "Murmur3Token.from_key": lambda mp: mp.setattr(
            Murmur3Token, "from_key", classmethod(lambda cls, key: cls(len(key) * 10 ** 17))),
        "TokenMap.get_replicas": lambda mp: mp.setattr(TokenMap, "get_replicas", lambda self, ks, token: theirs),
        "Metadata.get_replicas": lambda mp: mp.setattr(Metadata, "get_replicas", lambda self, ks, key: theirs),
    }


@pytest.mark.parametrize("change", sorted(_changed_classes()))
def test_a_changed_driver_class_is_searched_as_the_driver_searches(spec, monkeypatch, change):
    """A search method or the tokens' ``value`` replaced on the driver's classes after import: the
    same replicas as the driver's search, which calls them (no search of its own on the old ones)."""
    metadata = _token_map({"values": [n * 10 ** 18 for n in range(-9, 10, 2)], "built": True, "lie": None,
                           "plain": True})
    keys = [bytes([n]) * n for n in range(1, 13)]
    plain = [id(spec.get_replicas(metadata, "ks", key)) for key in keys]
    _changed_classes()[change](monkeypatch)
    theirs = [metadata.get_replicas("ks", key) for key in keys]
    ours = [spec.get_replicas(metadata, "ks", key) for key in keys]
    assert [id(found) for found in ours] == [id(found) for found in theirs]
    assert [id(found) for found in ours] != plain  # (the change changes the answer: the check could fail)
    monkeypatch.undo()
    assert [id(spec.get_replicas(metadata, "ks", key)) for key in keys] == plain


def test_replicas_of_a_built_murmur3_map_are_found_without_the_drivers_call(spec):
    """Only what it cannot search itself goes to ``Metadata.get_replicas`` (here: a keyspace not built)."""
    metadata = _token_map({"values": [-5, 7, 100], "built": True, "lie": None, "plain": True})
    asked = []
    drivers = metadata.get_replicas
    metadata.get_replicas = lambda keyspace, key: asked.append(keyspace) or drivers(keyspace, key)
    for key in (b"a", b"b", b"c", b"d"):
        spec.get_replicas(metadata, "ks", key)
    assert asked == []
    spec.get_replicas(metadata, "other", b"a")
    assert asked == ["other"]


@settings(max_examples=1000)
@given(data=st.one_of(st.binary(max_size=70), st.binary(min_size=1, max_size=40).map(lambda b: bytes(x | 0x80 for x in b))))
def test_murmur3_as_the_drivers(spec, data):
    """The partitioner's hash of any key, the last block's high bytes (read as signed) included."""
    from cassandra import metadata

    assert spec.murmur3(data) == metadata.murmur3(data)


def test_a_replaced_murmur3_is_the_one_called(spec, monkeypatch):
    from cassandra import metadata

    asked = []
    monkeypatch.setattr(metadata, "murmur3", lambda key: asked.append(key) or 0)
    assert spec.murmur3(b"key") == 0 and asked == [b"key"]
    ring = _token_map({"values": [-5, 7, 100], "built": True, "lie": None, "plain": True})
    assert spec.get_replicas(ring, "ks", b"other") is ring.get_replicas("ks", b"other")
    assert asked == [b"key", b"other", b"other"]
