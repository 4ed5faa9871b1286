"""set_final_result / set_final_exception: each callback's function and arguments are taken, in the lock,
before any runs (as the driver's ``partial`` per callback): a callback that changes a later one's keyword
arguments, keyword arguments whose ``len`` says they are empty, or a listener that cannot be called (the
driver refuses it before any runs) leave the calls the driver makes."""

import threading

from cassandra.cluster import ResponseFuture

from pyfactories.futures import _futures
from pyfactories.futures import _futures_py


class Empty(dict):
    def __len__(self):
        return 0

    def __bool__(self):
        return False


def run(finish, listeners_of, cls=ResponseFuture):
    future = cls.__new__(cls)
    future._timer, future._metrics = None, None
    future._callback_lock, future._event = threading.Lock(), threading.Event()
    seen = []
    future._callbacks = future._errbacks = None
    listeners = listeners_of(seen)
    future._callbacks = future._errbacks = listeners
    try:
        finish(future, "result")
    except Exception as exc:
        seen.append(("error", type(exc), str(exc)))
    seen.append(future._event.is_set())
    return seen


def record(seen, tag):
    return lambda response, *args, **kwargs: seen.append((tag, response, args, kwargs))


def changing(seen):
    later = {"a": 1}

    def first(response):
        seen.append(("first", response))
        later["a"] = 2
        later["b"] = 3

    return [(first, (), {}), (record(seen, "second"), [1], later)]


def filling(seen):
    later = {}

    def first(response):
        seen.append(("first", response))
        later["filled"] = True

    return [(first, (), {}), (record(seen, "second"), (), later)]


cases = [
    changing,
    filling,
    lambda seen: [(record(seen, "lying"), (), Empty(k=1))],
    lambda seen: [(record(seen, "pairs"), (), [("p", 1)])],
    lambda seen: [(record(seen, "before"), (), {}), (5, (), {})],
    lambda seen: [(record(seen, "before"), (), {}), (record(seen, "keys"), (), {1: 2})],
]
for listeners_of in cases:
    for name in ("set_final_result", "set_final_exception"):
        driver = run(getattr(ResponseFuture, "_" + name), listeners_of)
        for module in (_futures, _futures_py):  # on a future with the module's fields, as its futures have
            # (named as the driver's class: an AttributeError names it, on scylla-driver's futures)
            lean = type("ResponseFuture", (module.FutureFields, ResponseFuture), {})
            assert run(getattr(module, name), listeners_of, lean) == driver, (name, driver)
print("ok")
