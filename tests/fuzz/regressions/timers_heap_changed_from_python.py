"""``TimerService._heads`` was the service's live heap: code that changed it (an entry that is not a
``(deadline, bucket)`` tuple, a list in its place) had the compiled ``fire`` read it unchecked (a
list read as a tuple: a segfault). ``_heads`` is now a copy; the heap is the C code's alone."""

from pyfactories.connection import _timers
from pyfactories.connection import _timers_py

for change in ("list-entry", "none-entry", "appended", "cleared", "replaced"):
    fired = []
    for module in (_timers_py, _timers):
        service = module.TimerService(lambda deadline: None, clock=lambda: 0.0)
        service.add(1.0, lambda: fired.append(module.__name__))
        heads = service._heads
        assert heads == [(1.0, 100)]
        if change == "list-entry":
            heads[0] = [0.5, 100]
        elif change == "none-entry":
            heads[0] = None
        elif change == "appended":
            heads.append("not an entry")
        elif change == "cleared":
            heads.clear()
        else:
            try:
                service._heads = [[0.5, 3]]
            except AttributeError:
                pass
        assert service._heads == [(1.0, 100)], change
        assert service.fire(2.0) == float("inf")
    assert fired == ["pyfactories.connection._timers_py", "pyfactories.connection._timers"], change
print("ok")
