"""The query plan of the driver's default load-balancing policy, the replicas it asks for and the client
timestamp of its generator: part of the pure-Python twin (and specification) of the compiled
``pyfactories.futures._futures`` (its ``_plans.pxi``), used by :mod:`pyfactories.futures._futures_py`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from types import MethodType
from typing import Any

from cassandra import metadata as _metadata
from cassandra.metadata import MAX_LONG, MIN_LONG, Metadata, Murmur3Token, TokenMap
from cassandra.policies import DCAwareRoundRobinPolicy, HostDistance, TokenAwarePolicy
from cassandra.timestamps import MonotonicTimestampGenerator

__all__ = ["distance", "murmur3", "get_replicas", "token_aware_plan", "query_plan", "timestamp"]


def distance(child: Any, host: Any) -> Any:
    """``child.distance(host)``; a ``DCAwareRoundRobinPolicy``'s for a host of its local data centre
    without the call (its ``_dc``: the host's data centre, or the local one when it has none)."""
    if type(child) is DCAwareRoundRobinPolicy and (host.datacenter or child.local_dc) == child.local_dc:
        return HostDistance.LOCAL
    return child.distance(host)


_ABSENT = object()


def _type_lookup(cls: type, name: str) -> Any:
    """What ``cls.name`` finds on the class and its bases, unbound (``_ABSENT`` for nothing, and for
    anything but a class: a stand-in put in the driver's place, e.g. by ``mock.patch``, even one whose
    ``__class__`` says it is a class)."""
    if not issubclass(type(cls), type):
        return _ABSENT
    for klass in type.__dict__["__mro__"].__get__(cls):
        if name in vars(klass):
            return vars(klass)[name]
    return _ABSENT


def drivers_own(fn: Any) -> Any:
    """``fn`` if it is the driver's own function (defined in its package, not a wrapper put in its place
    before this module was imported); otherwise something no lookup finds: the fast path is never taken."""
    module = getattr(fn, "__module__", None)
    if type(module) is str and module.startswith("cassandra.") and getattr(fn, "__wrapped__", None) is None:
        return fn
    return object()


def bound_as(obj: Any, name: str, fn: Any) -> bool:
    """Whether ``obj.<name>`` is the class's ``fn`` bound to ``obj`` (nothing of the object's own in front of
    it), asked through the attribute lookup: ``vars(obj)`` would make the object's ``__dict__``, which two
    threads making at once CPython 3.11 can free twice."""
    method = getattr(obj, name, None)
    return type(method) is MethodType and method.__func__ is fn and method.__self__ is obj


# What the driver's search calls or reads on its classes, as imported: a class changed since (a
# method replaced, a ``value`` property put on the tokens) is the driver's to search.
def _steps(names: Any) -> tuple:
    """``((cls, name, what it is now), ...)`` for ``names``, pairs ``(cls, name)``: what a fast path
    taken only while the driver's classes are as imported checks with :func:`_unchanged`."""
    return tuple((cls, name, _type_lookup(cls, name)) for cls, name in names)


def _unchanged(steps: tuple) -> bool:
    """Whether every class of ``steps`` is a class and each name finds what it found then."""
    return all(issubclass(type(cls), type) and _type_lookup(cls, name) is then for cls, name, then in steps)


_SEARCHED = _steps((
    (Metadata, "get_replicas"), (TokenMap, "get_replicas"), (TokenMap, "__bool__"), (TokenMap, "__len__"),
    (Murmur3Token, "from_key"), (Murmur3Token, "hash_fn"), (Murmur3Token, "__new__"), (Murmur3Token, "__init__"),
    (Murmur3Token, "__lt__"), (Murmur3Token, "__getattribute__"), (Murmur3Token, "value")))


def murmur3(data: Any) -> Any:
    """The driver's ``cassandra.metadata.murmur3`` (Cassandra's ``Murmur3Partitioner`` hash: the first 64
    bits of MurmurHash3 x64/128, seed 0, the last partial block's bytes read as signed); the compiled
    twin computes it itself for ``bytes`` while the driver's function is the one imported."""
    return _metadata.murmur3(data)


def get_replicas(metadata: Any, keyspace: Any, routing_key: Any) -> Any:
    """``metadata.get_replicas(keyspace, routing_key)``, the same list object. For the driver's own
    ``Metadata`` with a ``Murmur3Partitioner`` token map built for ``keyspace``, the key is hashed and
    the ring searched on the tokens' values, without a ``Token`` made per request and compared in Python;
    anything else (another token class, a map not built yet, a ring or token that is not the driver's
    type, a driver class whose search methods or token ``value`` were replaced) is the driver's call."""
    token_map = metadata.token_map if type(metadata) is Metadata else None
    if (type(token_map) is not TokenMap or token_map.token_class is not Murmur3Token
            or type(routing_key) is not bytes or type(keyspace) is not str or _metadata.murmur3 is None
            or not _unchanged(_SEARCHED)):
        return metadata.get_replicas(keyspace, routing_key)
    value = _metadata.murmur3(routing_key)  # first, as the driver hashes before it reads the map
    if type(value) is not int:
        return metadata.get_replicas(keyspace, routing_key)
    if value == MIN_LONG:
        value = MAX_LONG
    by_keyspace, ring = token_map.tokens_to_hosts_by_ks, token_map.ring
    tokens_to_hosts = by_keyspace.get(keyspace) if type(by_keyspace) is dict else None
    if type(tokens_to_hosts) is not dict or not tokens_to_hosts or type(ring) is not list or not ring:
        return metadata.get_replicas(keyspace, routing_key)
    lo, hi = 0, len(ring)
    while lo < hi:  # bisect_left(ring, Murmur3Token(value))
        mid = (lo + hi) // 2
        token = ring[mid]
        if type(token) is not Murmur3Token:
            return metadata.get_replicas(keyspace, routing_key)
        token_value = vars(token).get("value")  # (its class has no ``value`` of its own: checked above)
        if type(token_value) is not int:
            return metadata.get_replicas(keyspace, routing_key)
        if token_value < value:
            lo = mid + 1
        else:
            hi = mid
    return tokens_to_hosts[ring[lo] if lo < len(ring) else ring[0]]


def token_aware_plan(policy: Any, working_keyspace: Any, query: Any) -> Iterator[Any]:
    """``TokenAwarePolicy.make_query_plan``: the same hosts in the same order, with the same calls on the
    policies (the child's plan is started only once the replicas are used up)."""
    keyspace = query.keyspace if query and query.keyspace else working_keyspace
    child = policy._child_policy
    routing_key = None if query is None else query.routing_key
    if routing_key is None or keyspace is None:
        yield from child.make_query_plan(keyspace, query)
        return
    replicas = get_replicas(policy._cluster_metadata, keyspace, routing_key)
    if policy.shuffle_replicas:
        random.shuffle(replicas)
    for replica in replicas:
        if replica.is_up and distance(child, replica) == HostDistance.LOCAL:
            yield replica
    for host in child.make_query_plan(keyspace, query):
        if host not in replicas or distance(child, host) == HostDistance.REMOTE:
            yield host


def query_plan(load_balancer: Any, working_keyspace: Any, query: Any) -> Iterator[Any]:
    """``iter(load_balancer.make_query_plan(working_keyspace, query))``, :func:`token_aware_plan` for the
    driver's ``TokenAwarePolicy`` (its default, around a ``DCAwareRoundRobinPolicy``)."""
    if type(load_balancer) is TokenAwarePolicy:
        return token_aware_plan(load_balancer, working_keyspace, query)
    return iter(load_balancer.make_query_plan(working_keyspace, query))


def timestamp(generator: Any) -> int:
    """``generator()``: for the driver's ``MonotonicTimestampGenerator``, what its ``__call__`` does."""
    if type(generator) is not MonotonicTimestampGenerator or "_next_timestamp" in vars(generator):
        return generator()  # (an instance's own ``_next_timestamp`` is what the driver's ``__call__`` calls)
    with generator.lock:
        now, last = int(time.time() * 1e6), generator.last
        if now > last:
            generator.last = now
            return now
        generator._maybe_warn(now=now)
        generator.last = last + 1
        return generator.last
