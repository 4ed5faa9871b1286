# cython: language_level=3
"""Which protocol handler decodes a request of a fast-path session, and which row factory its future keeps.

The fast path (``pyfactories.decoding``) runs ``RequestRouter`` as a request-init listener of each
session it is enabled on, for every request; so the decision is a few identity checks in C. The
handlers are the fast path's (built in ``pyfactories.decoding``); this module knows them only as the
objects it is given, and works without the driver's compiled internals.
"""

cdef enum:
    _NAMED = 0
    _DICT = 1
    _TUPLE = 2

#: Indexes of the handlers a Router is given, by the kind of rows they build.
NAMED, DICT, TUPLE = _NAMED, _DICT, _TUPLE

cdef enum:
    _ROUTE_CACHE_SIZE = 64

#: How many factories' answers a Router keeps (fixed: the module attribute is for reading).
ROUTE_CACHE_SIZE = _ROUTE_CACHE_SIZE


cdef class Router:
    """Which protocol handler decodes a request, and which row factory its future keeps.

    Decided from the row factory the request's execution profile (or the legacy
    ``session.row_factory``) gave its future, by identity against the factories
    it knows; any other object is asked once for ``__pyfactories_factory__``
    and the answer is kept in a small cache by identity (the object is kept
    alive while it is cached, so its id cannot be reused meanwhile).
    """
    cdef readonly object driver_handler
    cdef tuple handlers  # by kind of rows: NAMED, DICT, TUPLE
    cdef object tuple_factory, session_default
    cdef tuple named, dicts, kept
    cdef dict marked  # id(factory) -> (factory, whether it is marked)

    def __init__(self, driver_handler, handlers, *, tuple_factory, session_default, named=(), dicts=(), kept=()):
        """``handlers``: the fast handlers by kind of rows. ``session_default``: the factory that gets
        the kind of rows the session asked for; ``named``, ``dicts``: factories whose rows the named
        or dict handler builds; ``kept``: factories the future keeps, fed plain tuples decoded fast."""
        # Everything is checked and copied before any of it is kept: a router called again with
        # other arguments (re-entrantly, from a factory's attribute) never holds half of each.
        cdef tuple by_kind = tuple(handlers)
        if len(by_kind) != 3:
            raise ValueError("a router needs a handler for each kind of rows (named, dict, tuple)")
        named, dicts, kept = tuple(named), tuple(dicts), tuple(kept)
        self.driver_handler = driver_handler
        self.handlers = by_kind
        self.tuple_factory = tuple_factory
        self.session_default = session_default
        self.named, self.dicts, self.kept = named, dicts, kept
        self.marked = {}

    cpdef tuple route(self, row_factory, int rows_kind):
        """``(handler class, row factory for the future)`` of a request whose future has ``row_factory``,
        on a session whose fast path builds ``rows_kind`` rows for the driver's default factory."""
        if rows_kind != _NAMED and rows_kind != _DICT:
            raise ValueError(f"a session's fast path builds named or dict rows, not kind {rows_kind}")
        if row_factory is self.session_default:
            return self.handlers[rows_kind], self.tuple_factory
        if row_factory is self.tuple_factory:
            return self.handlers[_TUPLE], self.tuple_factory
        if _among(row_factory, self.named):
            return self.handlers[_NAMED], self.tuple_factory
        if _among(row_factory, self.dicts):
            return self.handlers[_DICT], self.tuple_factory
        if _among(row_factory, self.kept) or self._marked(row_factory):
            return self.handlers[_TUPLE], row_factory
        return self.driver_handler, row_factory

    cdef bint _marked(self, row_factory) except -1:
        cdef dict marked_by_id = self.marked
        if marked_by_id is None:
            raise TypeError("Router.__init__ was not called")
        entry = marked_by_id.get(id(row_factory))
        if type(entry) is tuple and len(<tuple>entry) == 2 and (<tuple>entry)[0] is row_factory:
            return (<tuple>entry)[1] is True
        try:
            marked = bool(getattr(row_factory, "__pyfactories_factory__", False))
        except Exception:  # an object whose attributes cannot be read: the driver's own path
            marked = False
        # the attribute's code may have cleared or filled the cache (or set the router up anew)
        marked_by_id = self.marked
        while marked_by_id and len(marked_by_id) >= _ROUTE_CACHE_SIZE:
            marked_by_id.pop(next(iter(marked_by_id)), None)  # the oldest answer
        marked_by_id[id(row_factory)] = (row_factory, marked)
        return marked

    def cache_clear(self):
        self.marked.clear()

    @property
    def cached(self):
        """How many factories' answers are cached."""
        return len(self.marked)


cdef inline bint _among(obj, tuple objects):
    cdef Py_ssize_t i
    for i in range(len(objects)):
        if objects[i] is obj:
            return True
    return False


cdef class RequestRouter:
    """A request-init listener (``Session.add_request_init_listener``) of a session with the fast path on.

    The driver runs it after it gave the request's future the session's
    protocol handler and before it sends the request: a future that still has
    the driver's ``ProtocolHandler`` gets the handler ``Router.route`` picks for
    its row factory (a handler someone else set is left alone), and keeps it for
    its later pages. Rows built by the handler need no second pass, so those
    futures get ``tuple_factory``.
    """
    cdef readonly Router router
    cdef readonly int rows_kind

    def __init__(self, Router router not None, int rows_kind):
        if rows_kind != _NAMED and rows_kind != _DICT:
            raise ValueError(f"a session's fast path builds named or dict rows, not kind {rows_kind}")
        self.router = router
        self.rows_kind = rows_kind

    def __call__(self, future):
        cdef Router router = self.router
        if router is None:
            raise TypeError("RequestRouter.__init__ was not called")
        driver_handler = router.driver_handler
        if future._protocol_handler is not driver_handler:
            return
        row_factory = future.row_factory
        handler, routed_factory = router.route(row_factory, self.rows_kind)
        if handler is not driver_handler:
            future._protocol_handler = handler
            if routed_factory is not row_factory:
                future.row_factory = routed_factory
