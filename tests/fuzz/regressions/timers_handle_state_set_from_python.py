"""``TimerHandle`` was picklable (Cython's automatic ``__reduce_cython__``/``__setstate_cython__``):
its state exposed the service's private queue, and set on a handle made with ``__new__`` it gave the
handle that queue with no service, so ``cancel()`` called a method on ``None`` (a segfault). The
compiled timer classes are no longer picklable (a ``TypeError``), and ``cancel`` of a handle without
a service does nothing."""

import copy
import pickle

from pyfactories.connection import _timers

service = _timers.TimerService(lambda deadline: None, clock=lambda: 0.0)
fired = []
handle = service.add(1.0, lambda: fired.append("kept"))
assert not hasattr(handle, "__reduce_cython__") and not hasattr(handle, "__setstate_cython__")
for attempt in (lambda: pickle.dumps(handle), lambda: copy.copy(handle), lambda: pickle.dumps(service)):
    try:
        attempt()
        raise AssertionError("a timer's state went out")
    except TypeError:
        pass
bare = _timers.TimerHandle.__new__(_timers.TimerHandle)
bare.cancel()  # no queue, no service: nothing to do
assert bare.pending is False
assert service.fire(2.0) == float("inf") and fired == ["kept"]
print("ok")
