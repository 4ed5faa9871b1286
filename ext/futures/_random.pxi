# Included by _futures.pyx: ``random.choice`` and ``random.shuffle`` as the driver calls them (scylla-driver's
# pool draws a connection, its token-aware policy shuffles replicas), their steps taken here while they are
# ``random``'s own: the same draws from the same generator, without their Python frames.

import random as _random_module

cdef object _Random = _random_module.Random
cdef object _RANDOM = getattr(_random_module, "_inst", None)  # the instance behind random's functions
cdef object _CHOICE = _Random.choice
cdef object _SHUFFLE = _Random.shuffle
cdef tuple _DRAW_STEPS = _steps(((_Random, "choice"), (_Random, "shuffle"), (_Random, "_randbelow"),
                                 (_Random, "getrandbits")))
cdef bint _DRAWS_BITS = _Random.__dict__.get("_randbelow") is _Random.__dict__.get("_randbelow_with_getrandbits")


cdef inline bint _randoms_own(method, fn) except -1:
    """Whether ``method`` is ``fn`` bound to ``random``'s instance, whose class draws with ``getrandbits``."""
    return (_DRAWS_BITS and type(_RANDOM) is _Random and _is_bound(method, _RANDOM, fn)
            and _unchanged(_DRAW_STEPS))


cdef object _below(getrandbits, Py_ssize_t n):
    """``Random._randbelow_with_getrandbits(n)``: ``getrandbits`` of ``n``'s bit length until below ``n``."""
    cdef int bits = 0
    while (n >> bits) != 0:
        bits += 1
    drawn = getrandbits(bits)
    while drawn >= n:
        drawn = getrandbits(bits)
    return drawn


cdef object _draw(list active):
    """``random.choice(active)``, as the driver's pool calls it (``random`` as its module sees it)."""
    choice = _pool_module.random.choice
    if _pool_module.random is not _random_module or not active or not _randoms_own(choice, _CHOICE):
        return choice(active)
    return active[_below(_RANDOM.getrandbits, len(active))]


cdef int _shuffle(replicas) except -1:
    """``shuffle(replicas)`` (``random.shuffle``): from the last place down, each swapped with one drawn below it."""
    cdef Py_ssize_t i
    if type(replicas) is not list or not _randoms_own(shuffle, _SHUFFLE):
        shuffle(replicas)
        return 0
    if len(<list>replicas) < 2:
        return 0
    getrandbits = _RANDOM.getrandbits
    items = <list>replicas
    for i in range(len(items) - 1, 0, -1):
        j = _below(getrandbits, i + 1)
        if i >= len(items) or j >= len(items):  # (a draw ran Python code that shrank the list)
            raise IndexError("list index out of range")
        items[i], items[j] = items[j], items[i]
    return 0
