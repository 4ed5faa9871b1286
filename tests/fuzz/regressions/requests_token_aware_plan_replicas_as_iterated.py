"""query_plan: the replicas a TokenAwarePolicy's metadata returns are iterated as the driver's generator
iterates them (a set, a tuple, a list subclass with its own ``__iter__``, a list a host's ``is_up``
shortens), not counted and indexed; a ``next`` from inside a step is refused and an error ends the plan,
as they do for a generator."""

from cassandra.connection import DefaultEndPoint
from cassandra.policies import DCAwareRoundRobinPolicy, SimpleConvictionPolicy, TokenAwarePolicy
from cassandra.pool import Host

from pyfactories.futures import _futures
from pyfactories.futures import _futures_py


class Shrinking(Host):
    """A host whose ``is_up`` takes the last replica out of the list being planned."""

    replicas = None

    @property
    def is_up(self):
        if Shrinking.replicas:
            Shrinking.replicas.pop()
        return True

    @is_up.setter
    def is_up(self, value):
        pass


class Reentering(Host):
    plan = None

    @property
    def is_up(self):
        if Reentering.plan is not None:
            return next(Reentering.plan) is not None
        return True

    @is_up.setter
    def is_up(self, value):
        pass


class Failing(Host):
    @property
    def is_up(self):
        raise KeyError("down")

    @is_up.setter
    def is_up(self, value):
        pass


class Statement:
    keyspace, routing_key = "ks", b"key"


class OwnIteration(list):
    def __iter__(self):
        return iter(list.__iter__(self).__reduce__()[1][0][::-1])


class Metadata:
    def __init__(self, make):
        self.make = make

    def get_replicas(self, keyspace, key):
        return self.make()


def hosts_of(kind):
    return [kind(DefaultEndPoint(f"127.0.0.{i + 1}"), SimpleConvictionPolicy, datacenter="dc1") for i in range(4)]


def walk(make_plan, kind, replicas_of):
    hosts = hosts_of(kind)
    child = DCAwareRoundRobinPolicy("dc1")
    policy = TokenAwarePolicy(child, shuffle_replicas=False)
    child.populate(None, hosts)
    child._position = 0  # (populate starts it anywhere)
    replicas = replicas_of(hosts)
    Shrinking.replicas = replicas if type(replicas) is list else None
    policy._cluster_metadata = Metadata(lambda: replicas)
    plan = make_plan(policy)
    Reentering.plan = plan
    taken = []
    for _ in range(10):
        try:
            taken.append(str(next(plan).endpoint))
        except StopIteration:
            taken.append("end")
        except Exception as exc:
            taken.append(type(exc).__name__)
    Reentering.plan = None
    return taken


makers = {
    "driver": lambda policy: iter(policy.make_query_plan(None, Statement())),
    "compiled": lambda policy: _futures.query_plan(policy, None, Statement()),
    "twin": lambda policy: _futures_py.query_plan(policy, None, Statement()),
}
cases = [
    (Host, lambda hosts: {hosts[2]}),
    (Host, lambda hosts: (hosts[3], hosts[0])),
    (Host, lambda hosts: OwnIteration([hosts[1], hosts[2]])),
    (Host, lambda hosts: iter([hosts[1]])),
    (Shrinking, lambda hosts: [hosts[0], hosts[1], hosts[2], hosts[3]]),
    (Reentering, lambda hosts: [hosts[0], hosts[1]]),
    (Failing, lambda hosts: [hosts[0], hosts[1]]),
]
for kind, replicas_of in cases:
    results = {name: walk(make, kind, replicas_of) for name, make in makers.items()}
    assert results["compiled"] == results["driver"], (kind, results)
    assert results["twin"] == results["driver"], (kind, results)
print("ok")
