"""What the query-plan tests of both driver lines share: a cluster stand-in, a token-aware policy over
the driver's data-centre-aware child (exactly the driver's class, or a subclass that records what it is
asked), and a plan walked as far as a test asks."""

from __future__ import annotations

import random
import uuid
from typing import Any

from hypothesis import strategies as st

#: what a case says of the cluster and the policy around the plan (a test's strategy adds the rest)
POLICY_CASES = {
    "hosts": st.lists(st.tuples(st.sampled_from(["dc1", "dc2", None]), st.booleans()), min_size=1, max_size=6),
    "local_dc": st.sampled_from(["dc1", "dc2", ""]),
    "remote": st.integers(0, 2),
    "shuffle": st.booleans(),
    "position": st.integers(0, 10),
    "seed": st.integers(0, 2**16),
    "recording": st.booleans(),
}


class Cluster:
    """What a policy's ``populate`` reads of a cluster."""

    def __init__(self, metadata, hosts):
        self.metadata = metadata
        self.endpoints_resolved = [h.endpoint for h in hosts]


def hosts_of(case: dict) -> list:
    """The case's hosts (data centre, up or down), each with an address and a host id of its own."""
    from cassandra.connection import DefaultEndPoint
    from cassandra.policies import SimpleConvictionPolicy
    from cassandra.pool import Host

    hosts = []
    for i, (dc, up) in enumerate(case["hosts"]):
        host = Host(DefaultEndPoint(f"127.0.0.{i + 1}"), SimpleConvictionPolicy, datacenter=dc, host_id=uuid.UUID(int=i))
        host.set_up() if up else host.set_down()
        hosts.append(host)
    return hosts


def token_aware_policy(case: dict, metadata: Any, hosts: list) -> Any:
    """``TokenAwarePolicy(DCAwareRoundRobinPolicy(...))`` populated with ``hosts``, its child at the
    case's round-robin position (a recording subclass when the case says so: its ``calls``)."""
    from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy

    class Recording(DCAwareRoundRobinPolicy):
        """A child that is not exactly the driver's class: asked as it is, and what it is asked kept."""

        def make_query_plan(self, working_keyspace=None, query=None):
            self.calls.append(("plan", working_keyspace, id(query)))
            return super().make_query_plan(working_keyspace, query)

        def distance(self, host):
            self.calls.append(("distance", str(host.endpoint)))
            return super().distance(host)

    child = (Recording if case["recording"] else DCAwareRoundRobinPolicy)(case["local_dc"], case["remote"])
    child.calls = []
    policy = TokenAwarePolicy(child, case["shuffle"])
    random.seed(0)
    policy.populate(Cluster(metadata, hosts), hosts)
    policy._child_policy._position = case["position"]
    return policy


def walk(plan: Any, take: int) -> tuple[list, float]:
    """The endpoints of up to ``take`` hosts of ``plan`` ("end" at its end, an error's name where it
    raised), and the next random number (the same only if both plans drew the same ones)."""
    taken = []
    try:
        for _ in range(take):
            taken.append(str(next(plan).endpoint))
    except StopIteration:
        taken.append("end")
    except Exception as exc:  # noqa: BLE001 (the plan's own error, compared)
        taken.append(type(exc).__name__)
    return taken, random.random()
