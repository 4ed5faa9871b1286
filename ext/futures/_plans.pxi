# Included by _futures.pyx: the query plan of the driver's default load-balancing policy and the
# client timestamp of its generator, both pure Python in the driver (pyfactories.futures._futures_py's
# distance, token_aware_plan, query_plan and timestamp).

cdef inline object _distance(child, host):
    if type(child) is DCAwareRoundRobinPolicy and (host.datacenter or child.local_dc) == child.local_dc:
        return _LOCAL
    return child.distance(host)


def distance(child, host):
    """``pyfactories.futures._futures_py.distance``."""
    return _distance(child, host)


# What the driver's search calls or reads on its classes, as imported: a class changed since (a
# method replaced, a ``value`` property put on the tokens) is the driver's to search.
cdef tuple _SEARCHED = _steps((
    (Metadata, "get_replicas"), (TokenMap, "get_replicas"), (TokenMap, "__bool__"), (TokenMap, "__len__"),
    (Murmur3Token, "from_key"), (Murmur3Token, "hash_fn"), (Murmur3Token, "__new__"),
    (Murmur3Token, "__init__"), (Murmur3Token, "__lt__"), (Murmur3Token, "__getattribute__"),
    (Murmur3Token, "value")))


cdef object _token_value(token):
    """The token's own ``value``, or None: the generic lookup (the class has no ``value`` and the object's
    ``__getattribute__``, as imported: no Python code runs), which reads it without making the token's
    ``__dict__`` (made by two threads at once, CPython 3.11 can free that dict twice)."""
    try:
        return PyObject_GenericGetAttr(token, "value")
    except AttributeError:
        return None


# MurmurHash3 (x64, 128 bits, seed 0) as Cassandra's Murmur3Partitioner takes it: the first 64 bits, the
# bytes of the last, partial block read as signed (sign-extended), as the partitioner does.
cdef uint64_t _C1 = 0x87c37b91114253d5ULL
cdef uint64_t _C2 = 0x4cf5ad432745937fULL
cdef object _DRIVERS_MURMUR3 = _metadata.murmur3  # the driver's, as imported (another one is called)


cdef inline uint64_t _rotl(uint64_t x, int r) noexcept nogil:
    return (x << r) | (x >> (64 - r))


cdef inline uint64_t _fmix(uint64_t k) noexcept nogil:
    k ^= k >> 33
    k *= 0xff51afd7ed558ccdULL
    k ^= k >> 33
    k *= 0xc4ceb9fe1a85ec53ULL
    k ^= k >> 33
    return k


cdef inline uint64_t _block(const unsigned char* p) noexcept nogil:
    cdef uint64_t v = 0
    cdef int i
    for i in range(7, -1, -1):
        v = (v << 8) | p[i]
    return v


cdef int64_t _murmur3(const unsigned char* data, Py_ssize_t length) noexcept nogil:
    cdef Py_ssize_t i, blocks = length // 16
    cdef uint64_t h1 = 0, h2 = 0, k1, k2
    cdef const unsigned char* tail
    cdef int rest = <int>(length & 15), j
    for i in range(blocks):
        k1 = _block(data + 16 * i)
        k2 = _block(data + 16 * i + 8)
        k1 *= _C1
        k1 = _rotl(k1, 31)
        k1 *= _C2
        h1 ^= k1
        h1 = _rotl(h1, 27)
        h1 += h2
        h1 = h1 * 5 + 0x52dce729
        k2 *= _C2
        k2 = _rotl(k2, 33)
        k2 *= _C1
        h2 ^= k2
        h2 = _rotl(h2, 31)
        h2 += h1
        h2 = h2 * 5 + 0x38495ab5
    tail = data + 16 * blocks
    k1 = k2 = 0
    for j in range(rest - 1, 7, -1):  # bytes 8..14 of the last block
        k2 ^= (<uint64_t><int64_t><signed char>tail[j]) << (8 * (j - 8))
    if rest > 8:
        k2 *= _C2
        k2 = _rotl(k2, 33)
        k2 *= _C1
        h2 ^= k2
    for j in range(min(rest, 8) - 1, -1, -1):  # bytes 0..7
        k1 ^= (<uint64_t><int64_t><signed char>tail[j]) << (8 * j)
    if rest > 0:
        k1 *= _C1
        k1 = _rotl(k1, 31)
        k1 *= _C2
        h1 ^= k1
    h1 ^= <uint64_t>length
    h2 ^= <uint64_t>length
    h1 += h2
    h2 += h1
    h1 = _fmix(h1)
    h2 = _fmix(h2)
    h1 += h2
    return <int64_t>h1


def murmur3(data):
    """``pyfactories.futures._futures_py.murmur3``: for ``bytes``, the hash computed here."""
    if type(data) is bytes and _metadata.murmur3 is _DRIVERS_MURMUR3 and _DRIVERS_MURMUR3 is not None:
        return _murmur3(<const unsigned char*>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))
    return _metadata.murmur3(data)


cdef object _get_replicas(metadata, keyspace, routing_key):
    # No Python code runs between reading the ring's length and the last token read (exact types and
    # the driver's classes as imported; the tokens' values are read from their instance dicts and
    # compared as ints), so the ring cannot change under the search; the one call that may run Python
    # code (the Token's hash) comes last.
    cdef Py_ssize_t lo = 0, hi, mid
    cdef list ring
    token_map = metadata.token_map if type(metadata) is Metadata else None
    if (type(token_map) is not TokenMap or token_map.token_class is not Murmur3Token
            or not _unchanged(_SEARCHED)
            or type(routing_key) is not bytes or type(keyspace) is not str):
        return metadata.get_replicas(keyspace, routing_key)
    hash_fn = _metadata.murmur3
    if hash_fn is None:
        return metadata.get_replicas(keyspace, routing_key)
    if hash_fn is _DRIVERS_MURMUR3:  # (routing_key is bytes: checked above)
        value = _murmur3(<const unsigned char*>PyBytes_AS_STRING(routing_key), PyBytes_GET_SIZE(routing_key))
    else:
        value = hash_fn(routing_key)  # first, as the driver hashes before it reads the map
    if type(value) is not int:
        return metadata.get_replicas(keyspace, routing_key)
    if value == _MIN_LONG:
        value = _MAX_LONG
    by_keyspace, found = token_map.tokens_to_hosts_by_ks, token_map.ring
    tokens_to_hosts = (<dict>by_keyspace).get(keyspace) if type(by_keyspace) is dict else None
    if type(tokens_to_hosts) is not dict or not tokens_to_hosts or type(found) is not list or not found:
        return metadata.get_replicas(keyspace, routing_key)
    ring = <list>found
    hi = len(ring)
    while lo < hi:  # bisect_left(ring, Murmur3Token(value))
        mid = (lo + hi) // 2
        token = ring[mid]
        if type(token) is not Murmur3Token:
            return metadata.get_replicas(keyspace, routing_key)
        token_value = _token_value(token)
        if type(token_value) is not int:
            return metadata.get_replicas(keyspace, routing_key)
        if token_value < value:
            lo = mid + 1
        else:
            hi = mid
    return (<dict>tokens_to_hosts)[ring[lo] if lo < len(ring) else ring[0]]


def get_replicas(metadata, keyspace, routing_key):
    """``pyfactories.futures._futures_py.get_replicas``."""
    return _get_replicas(metadata, keyspace, routing_key)


cdef enum:
    NOT_STARTED, REPLICAS, CHILD_SKIPPING_REPLICAS, CHILD, DONE

cdef object _END = object()  # the plan's end (None is a host a plan can yield)


cdef class TokenAwarePlan:
    """``pyfactories.futures._futures_py.token_aware_plan``: an iterator in the generator's steps (nothing runs
    before the first ``next``; the child's plan starts once the replicas are used up). As a generator:
    the replicas are iterated (whatever ``get_replicas`` returns, as the driver's ``for`` takes it), a
    ``next`` from inside a step is refused, and an error ends the plan."""

    cdef object policy, working_keyspace, query, keyspace, child, replicas, replica_iter, child_plan
    cdef Py_ssize_t replica_at  # with ``replica_iter`` None: the next replica's index in the list ``replicas``
    cdef int state
    cdef bint running

    def __cinit__(self, policy, working_keyspace, query):
        self.policy, self.working_keyspace, self.query = policy, working_keyspace, query
        self.state = NOT_STARTED

    def __iter__(self):
        return self

    cdef _start(self):
        query, policy = self.query, self.policy
        self.keyspace = query.keyspace if query and query.keyspace else self.working_keyspace
        self.child = policy._child_policy
        routing_key = None if query is None else query.routing_key
        if routing_key is None or self.keyspace is None:
            self.child_plan = iter(self.child.make_query_plan(self.keyspace, query))
            self.state = CHILD
            return
        replicas = _get_replicas(policy._cluster_metadata, self.keyspace, routing_key)
        if policy.shuffle_replicas:
            _shuffle(replicas)
        self.replicas = replicas
        # a list is walked by index, as its iterator walks it, without the iterator object a request would keep
        self.replica_iter = None if type(replicas) is list else iter(replicas)
        self.replica_at = 0
        self.state = REPLICAS

    cdef object _next_replica(self):
        """The next replica, or _END; a list's length read at each step, as its iterator reads it."""
        cdef list replicas
        if self.replica_iter is not None:
            return next(self.replica_iter, _END)
        replicas = self.replicas
        if replicas is None or self.replica_at < 0 or self.replica_at >= len(replicas):
            self.replica_at = -1  # ended, as an iterator stays ended once the list ran out
            return _END
        self.replica_at += 1
        return replicas[self.replica_at - 1]

    cdef object _step(self):
        if self.state == NOT_STARTED:
            self._start()
        if self.state == REPLICAS:
            replica = self._next_replica()
            while replica is not _END:
                if replica.is_up and _distance(self.child, replica) == _LOCAL:
                    return replica
                replica = self._next_replica()
            self.replica_iter = None
            self.child_plan = iter(self.child.make_query_plan(self.keyspace, self.query))
            self.state = CHILD_SKIPPING_REPLICAS
        if self.state == CHILD_SKIPPING_REPLICAS:
            for host in self.child_plan:
                if host not in self.replicas or _distance(self.child, host) == _REMOTE:
                    return host
        elif self.state == CHILD:
            for host in self.child_plan:
                return host
        return _END

    def __next__(self):
        if self.running:
            raise ValueError("generator already executing")
        if self.state == DONE:
            raise StopIteration
        self.running = True
        try:
            host = self._step()
        except StopIteration as exc:  # as a generator says it (PEP 479)
            self._end()
            raise RuntimeError("generator raised StopIteration") from exc
        except BaseException:
            self._end()  # an error ends the plan, as it ends a generator
            raise
        finally:
            self.running = False
        if host is _END:
            self._end()
            raise StopIteration
        return host

    cdef _end(self):
        self.state = DONE
        self.replicas = self.replica_iter = self.child_plan = self.child = None


cdef class ScyllaTokenAwarePlan(TokenAwarePlan):
    """``pyfactories.futures._scylla_py.token_aware_plan``, in :class:`TokenAwarePlan`'s generator steps: the
    replicas, then the hosts the child's plan adds (that list made once the replicas are used up), each
    list walked once per distance of ``_IN_ORDER`` as the driver's ``for`` walks it; a table with tablets
    (or anything not the driver's own) planned by the policy's own ``make_query_plan``."""

    cdef object hosts
    cdef Py_ssize_t order
    cdef bint rest

    cdef _start(self):
        query, policy = self.query, self.policy
        self.keyspace = query.keyspace if query and query.keyspace else self.working_keyspace
        self.child = policy._child_policy
        routing_key = None if query is None else query.routing_key  # read once (a property of a bound statement)
        if routing_key is None or self.keyspace is None:
            self.child_plan = iter(self.child.make_query_plan(self.keyspace, query))
            self.state = CHILD
            return
        metadata = policy._cluster_metadata
        if not _untabled(metadata, self.keyspace, query, routing_key):  # the policy's own steps
            self.child_plan = iter(TokenAwarePolicy.make_query_plan(policy, self.working_keyspace, query))
            self.state = CHILD
            return
        replicas = _get_replicas(metadata, self.keyspace, routing_key)
        if policy.shuffle_replicas and not query.is_lwt() and not (_TABLET_VERSIONS and _serial(query.consistency_level)):
            _shuffle(replicas)
        self.replicas = self.hosts = replicas
        self.order = 0
        self.replica_iter = iter(replicas)
        self.state = REPLICAS

    cdef object _step(self):
        if self.state == NOT_STARTED:
            self._start()
        if self.state == CHILD:
            for host in self.child_plan:
                return host
            return _END
        while self.state == REPLICAS:
            wanted = _IN_ORDER[self.order]
            for host in self.replica_iter:
                if host.is_up and _distance(self.child, host) == wanted:
                    return host
            self.order += 1
            if self.order < len(_IN_ORDER):
                self.replica_iter = iter(self.hosts)
            elif not self.rest:  # the hosts the child's plan adds, as one list
                self.rest = True
                self.hosts = [host for host in self.child.make_query_plan(self.keyspace, self.query)
                              if host not in self.replicas]
                self.order = 0
                self.replica_iter = iter(self.hosts)
            else:
                break
        return _END

    cdef _end(self):
        TokenAwarePlan._end(self)
        self.hosts = None


cdef inline object _query_plan(load_balancer, working_keyspace, query):
    if type(load_balancer) is TokenAwarePolicy:
        return TokenAwarePlan(load_balancer, working_keyspace, query)
    return iter(load_balancer.make_query_plan(working_keyspace, query))


def query_plan(load_balancer, working_keyspace, query):
    """``pyfactories.futures._futures_py.query_plan``."""
    return _query_plan(load_balancer, working_keyspace, query)


cdef object _timestamp(generator):
    if type(generator) is not MonotonicTimestampGenerator or "_next_timestamp" in generator.__dict__:
        return generator()
    lock = generator.lock
    if type(lock) is _LockType:  # what ``with`` does, without its two bound methods
        lock.acquire()
        try:
            return _next_timestamp(generator)
        finally:
            lock.release()
    with lock:
        return _next_timestamp(generator)


cdef object _next_timestamp(generator):
    cdef object now, last
    now, last = int(_now() * 1e6), generator.last
    if now > last:
        generator.last = now
        return now
    generator._maybe_warn(now=now)
    generator.last = last + 1
    return generator.last


def timestamp(generator):
    """``pyfactories.futures._futures_py.timestamp``."""
    return _timestamp(generator)
