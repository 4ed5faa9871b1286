"""The compiled timer service read its heap entries, queues and queued timers with unchecked casts:
its heap is private, but ``gc.get_referents`` reaches it (and a queue's ``OrderedDict``), and an entry
changed there (a list where a ``(deadline, bucket)`` tuple is read, a key that is not a timer) was read
as a tuple or a timer (a segfault). Every one is now type-checked when read: a clear ``TypeError``,
the lock released, and the service still usable."""

import gc

from pyfactories.connection import _timers


def service_with_timer():
    service = _timers.TimerService(lambda deadline: None, clock=lambda: 0.0)
    handle = service.add(1.0, lambda: None)
    return service, handle


def referents(obj, kind):
    return [r for r in gc.get_referents(obj) if type(r) is kind]


# a heap entry replaced
service, handle = service_with_timer()
(heap,) = [r for r in referents(service, list) if r and type(r[0]) is tuple]
heap[0] = [0.5, 100]
try:
    service.fire(2.0)
    raise AssertionError("a list read as a heap entry")
except TypeError as exc:
    assert "heap entry" in str(exc)
heap[:] = []
assert service.idle() is False and service.fire(2.0) == float("inf")  # the lock was released

# a queue replaced
service, handle = service_with_timer()
(queues,) = [r for r in referents(service, dict) if 100 in r]
queues[100] = "not a queue"
for call in (lambda: service.fire(2.0), lambda: service.add(1.0, print)):
    try:
        call()
        raise AssertionError("a string read as a queue")
    except TypeError as exc:
        assert "queue" in str(exc)
assert service.queued() == len("not a queue")

# a timer that is not one, at the head of a queue
service, handle = service_with_timer()
queue = [r for r in gc.get_referents(handle) if type(r).__name__ == "_Queue"][0]
(timers,) = [r for r in gc.get_referents(queue) if type(r).__name__ == "OrderedDict"]
timers["not a timer"] = None
timers.move_to_end("not a timer", last=False)
try:
    service.fire(2.0)
    raise AssertionError("a string read as a timer")
except TypeError as exc:
    assert "TimerHandle" in str(exc)
assert service.idle() is False  # the lock was released
print("ok")
