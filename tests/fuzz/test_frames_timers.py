"""Timers: the compiled ``pyfactories.connection._timers.TimerService`` against its twin
``pyfactories.connection._timers_py``, step by step over random programs of ``add`` (timeouts of every kind:
negative, NaN, infinite, far in the future, ints beyond a double, floats' subclasses, objects with
``__float__``/``__index__``, strings), ``cancel``, ``fire`` (callbacks that add, cancel or raise),
``idle``, ``queued``, ``buckets`` and ``_heads`` (changed by the caller: a copy)."""

from __future__ import annotations

import logging

from hypothesis import given
from hypothesis import strategies as st

from pyfactories.connection import _timers
from pyfactories.connection import _timers_py
from tests.fuzz.conftest import fuzz


class Seconds(float):
    def __float__(self):
        return 1e9  # ignored: a float subclass is taken at its own value


class Floaty:
    def __init__(self, value):
        self.value = value

    def __float__(self):
        return self.value


class Indexy:
    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


timeouts = st.one_of(
    st.floats(-1, 5), st.floats(-1, 5), st.integers(-2, 10), st.sampled_from([0.0, 0.01, 0.015, 1e-9]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([1e300, 1e16, 4.6e16, 4.7e16, 10**400, True]),
    st.floats(0, 3).map(Seconds), st.floats(-1, 3).map(Floaty), st.integers(0, 3).map(Indexy),
    st.sampled_from(["1", None, b"1", [1]]),
)
steps = st.lists(st.one_of(
    st.tuples(st.just("add"), timeouts, st.sampled_from(["record", "raise", "add", "cancel-next", "cancel-self"])),
    st.tuples(st.just("cancel"), st.integers(0, 30)),
    st.tuples(st.just("fire"), st.one_of(st.none(), st.floats(0, 8), st.sampled_from([float("nan"), float("inf"), "x"]))),
    st.tuples(st.just("tick"), st.floats(0, 3)),
    st.tuples(st.just("idle")), st.tuples(st.just("queued")), st.tuples(st.just("buckets")),
    st.tuples(st.just("heads"), st.sampled_from(["read", "clear", "append", "replace-entry"])),
), max_size=30)


def run(module, program, resolution):
    log: list = []
    now = [0.0]
    woken: list = []
    try:
        service = module.TimerService(woken.append, clock=lambda: now[0], resolution=resolution)
    except Exception as exc:
        return [("init", type(exc))]
    handles: list = []

    def callback(kind, i):
        def cb():
            log.append(("fired", i))
            if kind == "raise":
                raise RuntimeError("timer callback")
            if kind == "add":
                handles.append(service.add(0.02, callback("record", len(handles))))
            elif kind == "cancel-next" and i + 1 < len(handles):
                handles[i + 1].cancel()
            elif kind == "cancel-self":
                handles[i].cancel()
        return cb

    for step in program:
        op = step[0]
        try:
            if op == "add":
                handle = service.add(step[1], callback(step[2], len(handles)))
                handles.append(handle)
                log.append(("added", handle.deadline, handle.pending))
            elif op == "cancel":
                if handles:
                    handles[step[1] % len(handles)].cancel()
                    log.append(("cancelled", [h.pending for h in handles]))
            elif op == "fire":
                log.append(("fire", service.fire(step[1]), service.live, service.wake_at))
            elif op == "tick":
                now[0] += step[1]
            elif op == "idle":
                log.append(("idle", service.idle(), service.wake_at))
            elif op == "queued":
                log.append(("queued", service.queued()))
            elif op == "buckets":
                log.append(("buckets", service.buckets()))
            else:
                heads = service._heads
                log.append(("heads", list(heads)))
                if step[1] == "clear":
                    heads.clear()
                elif step[1] == "append":
                    heads.append("not an entry")
                elif step[1] == "replace-entry" and heads:
                    heads[0] = [0.0, -1]
        except Exception as exc:
            log.append(("error", op, type(exc), str(exc) if isinstance(exc, (OverflowError, ValueError)) else ""))
    log.append(("woken", woken, service.live, service.queued(), service.buckets(), service._heads))
    return log


@fuzz
@given(program=steps, resolution=st.sampled_from([0.01, 0.01, 0.001, 1, 0.5, 1e-300]))
def test_frames_timer_service_is_the_twins(program, resolution):
    logging.getLogger("pyfactories.connection").disabled = True
    try:
        assert run(_timers, program, resolution) == run(_timers_py, program, resolution)
    finally:
        logging.getLogger("pyfactories.connection").disabled = False


@fuzz
@given(resolution=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-2, 3),
                            st.sampled_from(["0.1", None, Floaty(0.1), Indexy(1)])))
def test_frames_timer_resolution_is_the_twins(resolution):
    def outcome(module):
        try:
            service = module.TimerService(lambda deadline: None, clock=lambda: 1.0, resolution=resolution)
        except Exception as exc:
            return ("error", type(exc))
        try:
            return ("ok", service.add(0.5, lambda: None).deadline, service.buckets())
        except Exception as exc:
            return ("add-error", type(exc), str(exc))

    assert outcome(_timers) == outcome(_timers_py)
