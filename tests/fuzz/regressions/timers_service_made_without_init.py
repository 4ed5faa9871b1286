"""A ``TimerService`` made with ``__new__`` alone had no lock: ``idle``, ``queued``, ``buckets``,
``fire`` or ``_heads`` took a lock that was not there (a segfault), and ``__init__`` called again
freed the lock another thread could be waiting for. The lock is now made with the object, once;
a service whose ``__init__`` did not run raises ``AttributeError``, as the twin's does."""

from pyfactories.connection import _timers
from pyfactories.connection import _timers_py


def outcome(module, call):
    service = module.TimerService.__new__(module.TimerService)
    try:
        return ("ok", call(service))
    except Exception as exc:
        return ("error", type(exc))


calls = [lambda s: s.idle(), lambda s: s.queued(), lambda s: s.buckets(), lambda s: s._heads,
         lambda s: s.fire(1.0), lambda s: s.fire(), lambda s: s.add(1.0, print)]
for call in calls:
    want = outcome(_timers_py, call)
    assert want == ("error", AttributeError)
    assert outcome(_timers, call) == want

# initialised again while in use: the same lock, the timers before forgotten, as in the twin
for module in (_timers_py, _timers):
    fired = []
    service = module.TimerService(lambda deadline: None, clock=lambda: 0.0)
    first = service.add(1.0, lambda: fired.append("first"))
    service.__init__(lambda deadline: None, clock=lambda: 0.0)
    service.add(1.0, lambda: fired.append("second"))
    first.cancel()
    assert service.fire(5.0) == float("inf")
    assert fired == ["second"], (module, fired)
print("ok")
