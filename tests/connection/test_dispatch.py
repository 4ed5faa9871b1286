"""Dispatch of answers (``process_msg``) by ``pyfactories.connection._framing`` (id ``c``) and its twin
``pyfactories.connection._framing_py`` (``py``), against the driver's ``Connection.process_msg`` on driver
connections without a socket: what the request's callback gets, what is defunct, what is logged,
which stream ids are free again; called as a method and (compiled) straight from the read loop."""

from __future__ import annotations

import gc
import importlib
import logging
import re
import struct
import sys

import pytest
from cassandra.connection import Connection
from cassandra.marshal import int32_pack
from cassandra.protocol import ProtocolException, ProtocolHandler

from pyfactories import _driver, decoding
from tests.connection_fields import fields_of

MODULES = {"c": "pyfactories.connection._framing", "py": "pyfactories.connection._framing_py"}
VERSION = 4


@pytest.fixture(scope="module", params=sorted(MODULES), ids=sorted(MODULES))
def framing(request):
    return importlib.import_module(MODULES[request.param])


class Dispatching(Connection):
    """A driver ``Connection`` without a socket that records what its answers do."""

    def __init__(self):
        super().__init__("127.0.0.1", protocol_version=VERSION)
        self.events: list[tuple] = []
        self._on_orphaned_stream_released = lambda: self.events.append(("released",))

    def defunct(self, exc):
        self.events.append(("defunct", type(exc).__name__, str(exc)))
        self.is_defunct = True

    def handle_pushed(self, response):
        self.events.append(("pushed", describe(response)))

    def send(self, stream: int, callback=None, decoder=ProtocolHandler.decode_message, metadata=None) -> None:
        """What ``send_msg`` leaves behind for a request on ``stream``."""
        self.request_ids.remove(stream)
        self._requests[stream] = (callback, decoder, metadata)
        self.in_flight += 1

    def callback(self, name: str):
        def cb(response):
            self.events.append(("callback", name, describe(response)))
        return cb

    def state(self) -> tuple:
        return (self.events, sorted(self._requests), len(self.request_ids), list(self.request_ids)[-3:],
                self.in_flight, sorted(self.orphaned_request_ids), self.msg_received)


def describe(response) -> tuple:
    if isinstance(response, BaseException):
        return ("exception", type(response).__name__, str(response))
    attrs = {k: v for k, v in vars(response).items() if k != "stream_id"}
    return (type(response).__mro__[1].__name__ if type(response).__name__.startswith("Fastpath") else
            type(response).__name__, response.stream_id, sorted(attrs.items(), key=lambda kv: kv[0]))


def frame(stream: int, body: bytes, opcode: int = 0x08, flags: int = 0) -> bytes:
    return struct.pack(">BBhBi", VERSION | 0x80, flags, stream, opcode, len(body)) + body


def string(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">H", len(b)) + b


VOID = int32_pack(1)
KEYSPACE = int32_pack(3) + string("ks1")
SERVER_ERROR = int32_pack(0x0000) + string("server says no")
PROTOCOL_ERROR = int32_pack(0x000A) + string("bad frame")
UNSUPPORTED = int32_pack(0x000A) + string("Invalid or unsupported protocol version (9)")
STATUS_EVENT = string("STATUS_CHANGE") + string("UP") + bytes([4, 127, 0, 0, 1]) + int32_pack(9042)
TRUNCATED_ROWS = int32_pack(2) + b"\x00\x00"


def _raises(*args):
    raise ValueError("the decoder fails")


class ClaimsProtocolError:
    """An answer that says, through its ``__class__``, that it is a protocol error."""

    message, stream_id = "bad frame", 3

    @property
    def __class__(self):
        return ProtocolException

    def summary_msg(self):
        return "it claims to be a protocol error"

    def __str__(self):
        return self.summary_msg()


def _claims(*args):
    return ClaimsProtocolError()


def scenario(name: str, conn: Dispatching) -> list[tuple[int, bytes, int, int]]:
    """Set up ``conn`` for one scenario; the frames (stream, body, opcode, flags) it then reads."""
    fast = decoding.handler("named").decode_message
    if name == "void":
        conn.send(5, conn.callback("a"))
        conn.send(6, conn.callback("b"), fast)
        return [(5, VOID, 0x08, 0), (6, VOID, 0x08, 0)]
    if name == "keyspace":
        conn.send(7, conn.callback("a"), fast)
        return [(7, KEYSPACE, 0x08, 0)]
    if name == "server-error":
        conn.send(3, conn.callback("a"))
        return [(3, SERVER_ERROR, 0x00, 0)]
    if name == "protocol-error":
        conn.send(3, conn.callback("a"))
        return [(3, PROTOCOL_ERROR, 0x00, 0)]
    if name == "unsupported-version":
        conn.send(3, conn.callback("a"))
        return [(3, UNSUPPORTED, 0x00, 0)]
    if name == "claims-protocol-error":
        conn.send(3, conn.callback("a"), _claims)
        return [(3, VOID, 0x08, 0)]
    if name == "decoder-raises":
        conn.send(9, conn.callback("a"), _raises)
        return [(9, VOID, 0x08, 0)]
    if name == "bad-body":
        conn.send(9, conn.callback("a"), fast)
        return [(9, TRUNCATED_ROWS, 0x08, 0)]
    if name == "callback-raises":
        def boom(response):
            conn.events.append(("boom",))
            raise RuntimeError("the callback fails")
        conn.send(4, boom)
        conn.send(8, conn.callback("after"))
        return [(4, VOID, 0x08, 0), (8, VOID, 0x08, 0)]
    if name == "no-callback":
        conn.send(4, None)
        return [(4, VOID, 0x08, 0)]
    if name == "unknown-stream":  # timed out and dropped
        conn.request_ids.remove(11)
        return [(11, VOID, 0x08, 0)]
    if name == "orphaned":
        conn.send(12, conn.callback("a"))
        conn.send(13, conn.callback("b"))
        conn.orphaned_request_ids.add(12)
        return [(12, VOID, 0x08, 0), (13, VOID, 0x08, 0)]
    if name == "event":
        return [(-1, STATUS_EVENT, 0x0C, 0)]
    if name == "warning-flag":
        conn.send(2, conn.callback("a"), fast)
        return [(2, struct.pack(">H", 1) + string("careful") + VOID, 0x08, 0x08)]
    raise AssertionError(name)


SCENARIOS = ["void", "keyspace", "server-error", "protocol-error", "unsupported-version", "claims-protocol-error",
             "decoder-raises",
             "bad-body", "callback-raises", "no-callback", "unknown-stream", "orphaned", "event", "warning-flag"]


def run(name: str, process_msg, through_read_loop=None, fields=None) -> tuple:
    """The scenario on a fresh connection whose ``process_msg`` is ``process_msg``; with
    ``through_read_loop`` (a ``process_io_buffer``), the frames arrive as one read; with ``fields`` (a
    ``ConnectionFields`` class), the connection's first base is that, as ours have it."""
    cls = type("Conn", (fields, Dispatching) if fields else (Dispatching,), {"process_msg": process_msg})
    if through_read_loop is not None:
        cls.process_io_buffer = through_read_loop
    conn = cls()
    frames = scenario(name, conn)
    if through_read_loop is None:
        from cassandra.connection import _Frame
        for stream, body, opcode, flags in frames:
            conn.process_msg(_Frame(VERSION, flags, stream, opcode, 9, 9 + len(body)), body)
    else:
        conn._iobuf.write(b"".join(frame(*f) for f in frames))
        conn.process_io_buffer()
    return conn.state() + (conn.is_unsupported_proto_version,)


def logged(caplog) -> list[tuple]:
    """The records, the connection's id left out (each run has its own connection)."""
    return [(r.name, r.levelname, re.sub(r"\(\d+\)", "(id)", r.getMessage()), r.exc_info and r.exc_info[0].__name__)
            for r in caplog.records]


@pytest.mark.parametrize("with_fields", [False, True], ids=["dict", "fields"])
@pytest.mark.parametrize("name", SCENARIOS)
def test_dispatch_is_the_drivers(framing, name, with_fields, caplog):
    with caplog.at_level(logging.DEBUG, logger="cassandra"):
        want = run(name, Connection.process_msg)
        want_log = logged(caplog)
        caplog.clear()
        got = run(name, framing.process_msg, fields=fields_of(framing) if with_fields else None)
        got_log = logged(caplog)
    assert got == want
    assert got_log == want_log


@pytest.mark.parametrize("with_fields", [False, True], ids=["dict", "fields"])
@pytest.mark.parametrize("name", SCENARIOS)
def test_the_read_loop_dispatches_as_the_driver(framing, name, with_fields, caplog):
    """Frames read by our loop reach our dispatch (compiled: called directly, with no ``_Frame``)."""
    with caplog.at_level(logging.DEBUG, logger="cassandra"):
        want = run(name, Connection.process_msg, Connection.process_io_buffer)
        want_log = logged(caplog)
        caplog.clear()
        got = run(name, framing.process_msg, framing.process_io_buffer, fields_of(framing) if with_fields else None)
        got_log = logged(caplog)
    assert got == want
    assert got_log == want_log


def test_a_metaclass_that_checks_instances_its_own_way_is_asked(framing, monkeypatch, caplog):
    """The protocol error classes' metaclass asked whether an answer is one, as ``isinstance`` asks it:
    here it says the answer on stream 6 is, and that answer is handled as one."""
    def claims(cls, instance):
        return getattr(instance, "stream_id", None) == 6 or type.__instancecheck__(cls, instance)

    monkeypatch.setattr(type(ProtocolException), "__instancecheck__", claims, raising=False)
    with caplog.at_level(logging.DEBUG, logger="cassandra"):
        want = run("void", Connection.process_msg)
        want_log = logged(caplog)
        caplog.clear()
        got = run("void", framing.process_msg)
        got_log = logged(caplog)
    assert got == want and got_log == want_log
    assert any("Callback handler errored" in record[2] for record in want_log)  # (a result has no message)


def test_a_subclass_that_replaces_process_msg_gets_it_called(framing):
    """The profiler times ``process_msg`` in a subclass: the read loop must call that one."""
    seen = []

    def timed(self, header, body):
        seen.append(header.stream)
        return framing.process_msg(self, header, body)

    base = type("Base", (Dispatching,), {"process_msg": framing.process_msg,
                                         "process_io_buffer": framing.process_io_buffer})
    conn = type("Timed", (base,), {"process_msg": timed})()
    conn.send(5, conn.callback("a"))
    conn._iobuf.write(frame(5, VOID))
    conn.process_io_buffer()
    assert seen == [5] and conn.events[0][:2] == ("callback", "a") and 5 in conn.request_ids


def test_no_references_are_left_behind(framing):
    cls = type("Conn", (Dispatching,), {"process_msg": framing.process_msg,
                                        "process_io_buffer": framing.process_io_buffer})
    conn = cls()
    free = len(conn.request_ids)
    sink = []
    body = frame(5, VOID)

    def one():
        conn.send(5, sink.append)
        conn._iobuf.write(body)
        conn.process_io_buffer()
        sink.clear()

    for _ in range(200):
        one()
    gc.collect()
    before = sys.gettotalrefcount() if hasattr(sys, "gettotalrefcount") else None
    blocks = sys.getallocatedblocks()
    for _ in range(2000):
        one()
    gc.collect()
    assert sys.getallocatedblocks() - blocks < 50
    if before is not None:
        assert sys.gettotalrefcount() - before < 50
    assert conn._requests == {} and len(conn.request_ids) == free


@pytest.mark.parametrize("rows", decoding.KINDS)
@pytest.mark.parametrize("body,flags", [(VOID, 0), (VOID + b"\x00", 0), (KEYSPACE, 0),
                                        (struct.pack(">H", 1) + string("careful") + VOID, 0x08)])
def test_the_fast_paths_void_answer_is_the_drivers(rows, body, flags):
    """An INSERT's VOID answer is built by the fast path's decoder without the generic machinery:
    the same message as the driver's (attributes and their values), and the same error where the
    body is not exactly a VOID result."""
    def decode(handler):
        try:
            return describe(handler.decode_message(VERSION, *_driver.feature_args(), {}, 3, flags, 0x08, body, None,
                                                   None))
        except Exception as exc:
            return describe(exc)

    assert decode(decoding.handler(rows)) == decode(ProtocolHandler)
