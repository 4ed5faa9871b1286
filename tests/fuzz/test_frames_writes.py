"""Writes: the compiled ``push`` and ``take`` of ``pyfactories.connection._writes`` against their twins in
``pyfactories.connection._writes_py``, on queues of ``bytes``, ``bytearray``, ``memoryview``, ``bytes`` subclasses
whose ``len`` lies (up to ``sys.maxsize``) or changes the queue while it is measured, and other
objects; caps of every kind (floats, huge and negative ints, ``__index__``)."""

from __future__ import annotations

import sys
import threading
from collections import deque

from cassandra.io import libevreactor
from hypothesis import given
from hypothesis import strategies as st

from pyfactories.connection import _writes
from pyfactories.connection import _writes_py
from tests.fuzz.conftest import fuzz


class Conn:
    _write_again = False

    def __init__(self, items, write_again=False):
        self.deque = deque()
        self._deque_lock = threading.Lock()
        self._write_again = write_again


def item_of(conn: Conn, recipe):
    kind, payload, extra = recipe
    if kind == "bytes":
        return payload
    if kind == "bytearray":
        return bytearray(payload)
    if kind == "memoryview":
        return memoryview(payload)
    if kind == "text":
        return payload.decode("latin-1")
    if kind == "lying":
        class Lying(bytes):
            def __len__(self):
                return extra
        return Lying(payload)

    class Acting(bytes):  # its len changes the queue it is in
        def __len__(self):
            queue = conn.deque
            if extra == 0:
                queue.append(b"appended")
            elif extra == 1 and queue:
                queue.popleft()
            elif extra == 2:
                queue.clear()
            elif extra == 3:
                conn._write_again = True
            return bytes.__len__(self)
    return Acting(payload)


class Index:
    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


items = st.tuples(
    st.sampled_from(["bytes", "bytes", "bytes", "bytearray", "memoryview", "text", "lying", "acting"]),
    st.binary(max_size=30),
    st.one_of(st.integers(0, 3), st.integers(0, 100), st.just(sys.maxsize), st.integers(0, sys.maxsize)),
)
caps = st.one_of(st.integers(-5, 200), st.integers(-2**80, 2**80), st.just(sys.maxsize),
                 st.sampled_from([3.7, 20.0, float("inf"), True, None, "10"]), st.integers(0, 100).map(Index))


def outcome(take, recipe, cap, write_again):
    conn = Conn(None, write_again)
    conn.deque.extend(item_of(conn, r) for r in recipe)
    try:
        got = take(conn, cap)
        result = ("ok", type(got).__name__, bytes(got) if isinstance(got, (bytes, bytearray, memoryview)) else got)
    except Exception as exc:
        result = ("error", type(exc))
    return result, [bytes(x) if not isinstance(x, str) else x for x in conn.deque]


@fuzz
@given(recipe=st.lists(items, min_size=1, max_size=8), cap=caps, write_again=st.booleans())
def test_frames_take_is_the_twins(recipe, cap, write_again):
    assert outcome(_writes.take, recipe, cap, write_again) == outcome(_writes_py.take, recipe, cap, write_again)


class Loop:
    def __init__(self):
        self.notified = 0
        self._thread = None

    def notify(self):
        self.notified += 1


@fuzz
@given(pushes=st.lists(st.tuples(items, st.sampled_from(["none", "clear", "replace-deque", "loop-thread"])), max_size=8))
def test_frames_push_is_the_twins(pushes):
    runs = []
    saved = libevreactor._global_loop
    try:
        for push in (_writes_py.push, _writes.push):
            loop = Loop()
            libevreactor._global_loop = loop
            conn = Conn(None)
            log = []
            for recipe, then in pushes:
                try:
                    push(conn, item_of(conn, recipe))
                    log.append(("ok", len(conn.deque), loop.notified))
                except Exception as exc:
                    log.append(("error", type(exc)))
                if then == "clear":
                    conn.deque.clear()
                elif then == "replace-deque":
                    conn.deque = deque([b"x"])
                elif then == "loop-thread":
                    loop._thread = threading.current_thread() if loop._thread is None else None
            runs.append(log)
    finally:
        libevreactor._global_loop = saved
    assert runs[1] == runs[0]
