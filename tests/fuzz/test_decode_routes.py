"""``_routes.Router`` and ``RequestRouter`` handed row factories that run code, against a plain model.

Factories whose ``__eq__``/``__hash__`` lie or run code, whose ``__pyfactories_factory__`` is read
through a ``__getattr__`` that clears the router's cache, fills it past its bound, routes other
factories re-entrantly or sets the router up again (with the same arguments), or whose answer's
``__bool__`` raises or runs code; futures whose attributes run code. The route must be the model's:
identity against the factories the router knows, then the factory's mark, read once.
"""

from hypothesis import given
from hypothesis import strategies as st

from pyfactories.decoding import _routes
from tests.fuzz.conftest import fuzz

DRIVER, NAMED_H, DICT_H, TUPLE_H = "driver", "named-handler", "dict-handler", "tuple-handler"
HANDLERS = (NAMED_H, DICT_H, TUPLE_H)


def tuple_factory(names, rows):
    return rows


def session_default(names, rows):
    return rows


def named_a(names, rows):
    return rows


def dict_a(names, rows):
    return rows


def kept_a(names, rows):
    return rows


ARGS = dict(tuple_factory=tuple_factory, session_default=session_default, named=(named_a,), dicts=(dict_a,),
            kept=(kept_a,))


def _router():
    return _routes.Router(DRIVER, list(HANDLERS), **ARGS)


class State:
    router = None
    depth = 0


def _side_effect(what):
    router = State.router
    if what == "clear":
        router.cache_clear()
    elif what == "fill" and State.depth < 1:
        State.depth += 1
        try:
            for _ in range(70):
                router.route(Plain(), _routes.NAMED)
        finally:
            State.depth -= 1
    elif what == "reenter" and State.depth < 3:
        State.depth += 1
        try:
            router.route(Marked(True, "reenter"), _routes.DICT)
        finally:
            State.depth -= 1
    elif what == "reinit":
        router.__init__(DRIVER, list(HANDLERS), **ARGS)


class Plain:
    """A factory the router does not know: the driver's path."""

    def __call__(self, names, rows):
        return rows


class Loud(Plain):
    """Its comparisons and hash lie and run code: the router must not need them."""

    def __init__(self, what):
        self.what = what

    def __eq__(self, other):
        _side_effect(self.what)
        return True

    def __hash__(self):
        _side_effect(self.what)
        return 0


class Marked(Plain):
    """Marked through __getattr__, which runs code first."""

    def __init__(self, mark, what):
        self._mark, self._what = mark, what

    def __getattr__(self, name):
        if name != "__pyfactories_factory__":
            raise AttributeError(name)
        _side_effect(self._what)
        if self._mark == "raise":
            raise RuntimeError("no mark for you")
        if self._mark == "bad_bool":
            return BadBool()
        if self._mark == "loud_bool":
            return LoudBool(self._what)
        return self._mark


class BadBool:
    def __bool__(self):
        raise ValueError("no truth")


class LoudBool:
    def __init__(self, what):
        self.what = what

    def __bool__(self):
        _side_effect(self.what)
        return True


def _mark_of(factory):
    """The model's reading of a factory's mark."""
    if not isinstance(factory, Marked):
        return False
    return {"raise": False, "bad_bool": False, "loud_bool": True}.get(factory._mark, bool(factory._mark))


def model(factory, kind):
    if factory is session_default:
        return HANDLERS[kind], tuple_factory
    if factory is tuple_factory:
        return TUPLE_H, tuple_factory
    if factory is named_a:
        return NAMED_H, tuple_factory
    if factory is dict_a:
        return DICT_H, tuple_factory
    if factory is kept_a or _mark_of(factory):
        return TUPLE_H, factory
    return DRIVER, factory


WHATS = ["nothing", "clear", "fill", "reenter", "reinit"]
factories = st.one_of(
    st.sampled_from([session_default, tuple_factory, named_a, dict_a, kept_a, None, len]),
    st.builds(Plain),
    st.builds(Loud, st.sampled_from(WHATS)),
    st.builds(Marked, st.sampled_from([True, False, 1, 0, "", "yes", "raise", "bad_bool", "loud_bool"]),
              st.sampled_from(WHATS)),
)


@fuzz
@given(calls=st.lists(st.tuples(factories, st.sampled_from([_routes.NAMED, _routes.DICT]), st.integers(1, 3)),
                      min_size=1, max_size=20))
def test_routes_are_the_models_whatever_the_factories_do(calls):
    State.router = router = _router()
    for factory, kind, times in calls:
        for _ in range(times):  # again: the cached answer
            assert router.route(factory, kind) == model(factory, kind)
        assert router.cached <= _routes.ROUTE_CACHE_SIZE


class Future:
    def __init__(self, factory, handler, what):
        self._factory, self._handler, self._what = factory, handler, what

    @property
    def row_factory(self):
        _side_effect(self._what)
        return self._factory

    @row_factory.setter
    def row_factory(self, value):
        self._factory = value

    @property
    def _protocol_handler(self):
        _side_effect(self._what)
        return self._handler

    @_protocol_handler.setter
    def _protocol_handler(self, value):
        self._handler = value


@fuzz
@given(factory=factories, kind=st.sampled_from([_routes.NAMED, _routes.DICT]),
       handler=st.sampled_from([DRIVER, "someone-elses-handler"]), what=st.sampled_from(WHATS))
def test_request_router_sets_what_the_route_says(factory, kind, handler, what):
    State.router = router = _router()
    listener = _routes.RequestRouter(router, kind)
    future = Future(factory, handler, what)
    listener(future)
    if handler != DRIVER:
        assert (future._handler, future._factory) == (handler, factory)
    else:
        assert (future._handler, future._factory) == model(factory, kind)
