"""``CurrentTimers``, compiled (``c``) and pure Python (``py``): the timer service a connection class's
``create_timer`` adds to is that of the reactor's loop now, asked of ``made`` once per loop."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest

MODULES = {"c": "pyfactories.connection._timers", "py": "pyfactories.connection._timers_py"}


@pytest.fixture(params=sorted(MODULES), ids=sorted(MODULES))
def spec(request):
    return importlib.import_module(MODULES[request.param])


class Reactor:
    """A reactor module's stand-in: its loop now, and the timers made for each loop."""

    def __init__(self, spec):
        self.spec, self._global_loop, self.made = spec, object(), []

    def timers(self):
        timers = SimpleNamespace(loop=self._global_loop, service=self.spec.TimerService(lambda deadline: None))
        self.made.append(timers)
        return timers


def test_a_timer_is_added_to_the_service_of_the_loop_the_reactor_runs_now(spec):
    reactor = Reactor(spec)
    create_timer = classmethod(spec.CurrentTimers(reactor, reactor.timers).create_timer).__get__(None, object)
    fired = []
    first = create_timer(0.0, lambda: fired.append(1))
    create_timer(30.0, lambda: fired.append(2))
    assert len(reactor.made) == 1 and reactor.made[0].service.live == 2
    assert isinstance(first, spec.TimerHandle)
    reactor.made[0].service.fire()
    assert fired == [1]
    reactor._global_loop = object()  # a fork, or a reactor initialized again: the new loop's timers
    create_timer(30.0, lambda: fired.append(3))
    assert len(reactor.made) == 2 and reactor.made[1].service.live == 1 and reactor.made[0].service.live == 1


def test_a_loop_that_is_not_running_raises_what_made_raises(spec):
    def made():
        raise RuntimeError("not initialized")

    current = spec.CurrentTimers(SimpleNamespace(_global_loop=None), made)
    with pytest.raises(RuntimeError, match="not initialized"):
        current.create_timer(object, 1.0, lambda: None)
    with pytest.raises(RuntimeError, match="not initialized"):
        current.create_timer(object, 1.0, lambda: None)


def test_a_service_that_is_not_ours_is_asked_as_it_is(spec):
    added = []
    loop = object()
    service = SimpleNamespace(add=lambda timeout, callback: added.append((timeout, callback)) or "handle")
    current = spec.CurrentTimers(SimpleNamespace(_global_loop=loop), lambda: SimpleNamespace(loop=loop, service=service))
    assert current.create_timer(object, 2.5, print) == "handle" and added == [(2.5, print)]
