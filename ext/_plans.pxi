# Included by _futures.pyx: the query plan of the driver's default load-balancing policy and the
# client timestamp of its generator, both pure Python in the driver (pyfactories._futurespec's
# distance, token_aware_plan, query_plan and timestamp).

cdef inline object _distance(child, host):
    if type(child) is DCAwareRoundRobinPolicy and (host.datacenter or child.local_dc) == child.local_dc:
        return _LOCAL
    return child.distance(host)


def distance(child, host):
    """``pyfactories._futurespec.distance``."""
    return _distance(child, host)


cdef enum:
    NOT_STARTED, REPLICAS, CHILD_SKIPPING_REPLICAS, CHILD, DONE


cdef class TokenAwarePlan:
    """``pyfactories._futurespec.token_aware_plan``: an iterator in the generator's steps (nothing runs
    before the first ``next``; the child's plan starts once the replicas are used up)."""

    cdef object policy, working_keyspace, query, keyspace, child, replicas, child_plan
    cdef Py_ssize_t position
    cdef int state

    def __cinit__(self, policy, working_keyspace, query):
        self.policy, self.working_keyspace, self.query = policy, working_keyspace, query
        self.state = NOT_STARTED

    def __iter__(self):
        return self

    cdef _start(self):
        query, policy = self.query, self.policy
        self.state = DONE  # an error here ends the plan, as it ends a generator
        self.keyspace = query.keyspace if query and query.keyspace else self.working_keyspace
        self.child = policy._child_policy
        routing_key = None if query is None else query.routing_key
        if routing_key is None or self.keyspace is None:
            self.child_plan = iter(self.child.make_query_plan(self.keyspace, query))
            self.state = CHILD
            return
        replicas = policy._cluster_metadata.get_replicas(self.keyspace, routing_key)
        if policy.shuffle_replicas:
            shuffle(replicas)
        self.replicas = replicas
        self.state = REPLICAS

    def __next__(self):
        if self.state == NOT_STARTED:
            self._start()
        if self.state == REPLICAS:
            replicas = self.replicas
            while self.position < len(replicas):
                replica = replicas[self.position]
                self.position += 1
                if replica.is_up and _distance(self.child, replica) == _LOCAL:
                    return replica
            self.state = DONE
            self.child_plan = iter(self.child.make_query_plan(self.keyspace, self.query))
            self.state = CHILD_SKIPPING_REPLICAS
        if self.state == CHILD_SKIPPING_REPLICAS:
            for host in self.child_plan:
                if host not in self.replicas or _distance(self.child, host) == _REMOTE:
                    return host
            self.state = DONE
        elif self.state == CHILD:
            for host in self.child_plan:
                return host
            self.state = DONE
        raise StopIteration


cdef inline object _query_plan(load_balancer, working_keyspace, query):
    if type(load_balancer) is TokenAwarePolicy:
        return TokenAwarePlan(load_balancer, working_keyspace, query)
    return iter(load_balancer.make_query_plan(working_keyspace, query))


def query_plan(load_balancer, working_keyspace, query):
    """``pyfactories._futurespec.query_plan``."""
    return _query_plan(load_balancer, working_keyspace, query)


cdef object _timestamp(generator):
    cdef object now, last
    if type(generator) is not MonotonicTimestampGenerator:
        return generator()
    with generator.lock:
        now, last = int(_now() * 1e6), generator.last
        if now > last:
            generator.last = now
            return now
        generator._maybe_warn(now=now)
        generator.last = last + 1
        return generator.last


def timestamp(generator):
    """``pyfactories._futurespec.timestamp``."""
    return _timestamp(generator)
