"""The profiler with pyfactories' connection classes (``--connection pyfactories``), without a server:
the option, and the timed connection class on our framing, codec and timer services."""

from __future__ import annotations

import asyncio
import importlib
import io
import struct
import time

import pytest
from cassandra import ProtocolVersion, segment
from cassandra.connection import Connection, TimerManager
from cassandra.io.asyncioreactor import AsyncioConnection
from cassandra.io.libevreactor import LibevConnection

from profiling.__main__ import build_parser, main, options
from profiling.harness import client
from profiling.sampling import categories
from profiling.sampling.stacks import parse_raw
from profiling.timing import hooks, instrument
from pyfactories import connection
from tests.connection.test_connection import FakeDriverLoop, FakeLibev

FRAMINGS = {"c": "pyfactories.connection._framing", "py": "pyfactories.connection._framing_py"}
READY = b"READY, segments from now on"


def calls(rec):
    return rec.snapshot()["calls"]


# --- the option --------------------------------------------------------------------------------

def test_the_default_stays_the_drivers_connection():
    opts = options(build_parser().parse_args(["run", "-p", "sync"]), [])
    assert opts.connection == "driver"
    assert client.connection_class("libev") is LibevConnection
    assert client.connection_class("asyncio", "driver") is AsyncioConnection


@pytest.mark.parametrize("reactor, ours", [("libev", connection.TimerQueueLibevConnection),
                                           ("asyncio", connection.TimerQueueAsyncioConnection)])
def test_pyfactories_names_our_class_for_the_reactor(reactor, ours):
    argv = ["run", "-p", "sync", "--connection-class", reactor, "--connection", "pyfactories"]
    opts = options(build_parser().parse_args(argv), argv)
    assert (opts.connection_class, opts.connection) == (reactor, "pyfactories")
    spec = opts.spec("read", "sync", "tuple")
    assert client.connection_class(spec.connection_class, spec.connection) is ours
    assert spec.record()["connection"] == "pyfactories"
    # what connection.cluster_options gives a Cluster for the same reactor
    assert connection.cluster_options(client.connection_class(reactor)) == {"connection_class": ours}


def test_an_unknown_connection_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--connection", "ours"])
    assert "--connection" in capsys.readouterr().err


def test_a_reactor_we_have_no_class_for_is_refused_with_the_reason(monkeypatch):
    monkeypatch.setattr(client, "reactor_problem", lambda name: None)  # as if twisted were installed
    why = client.connection_problem("twisted", "pyfactories")
    assert "no connection class for the twisted reactor" in why and "--connection driver" in why
    with pytest.raises(client.ReactorUnavailable, match="twisted"):
        client.connection_class("twisted", "pyfactories")
    assert client.connection_problem("twisted", "driver") is None
    assert "unknown connection 'ours'" in client.connection_problem("libev", "ours")


def test_our_class_off_for_this_driver_stops_the_run_before_it_starts(monkeypatch, capsys):
    monkeypatch.setattr(connection, "DRIVER_UNSUPPORTED", "cassandra-driver 0.0.1 is not a release it is tested on")
    assert main(["run", "-p", "sync", "--connection", "pyfactories", "--out", "never-written"]) == 2
    err = capsys.readouterr().err
    assert "pyfactories' connection class is off" in err and "0.0.1" in err
    assert client.connection_problem("libev", "driver") is None  # the driver's class is unaffected


def test_list_names_the_connections(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out.split("connections (--connection", 1)[1]
    listed = dict(line.split(None, 1) for line in out.splitlines()[1:] if line.startswith("  "))
    assert listed == {"driver": "available", "pyfactories": "available"}


# --- the timed class on our connection classes -------------------------------------------------

@pytest.mark.parametrize("ours", [connection.TimerQueueLibevConnection, connection.TimerQueueAsyncioConnection])
def test_the_timed_class_wraps_our_methods(ours):
    rec = instrument.Recorder()
    timed = hooks.timed_connection_class(rec, ours)
    assert issubclass(timed, ours) and timed.__mro__[1] is ours
    assert timed.process_io_buffer.__wrapped__ is connection.framing.process_io_buffer
    assert timed.process_msg.__wrapped__ is ours.process_msg
    assert timed.create_timer.__func__.__wrapped__ is ours.create_timer.__func__
    for name in ("push", "handle_read", "handle_write"):  # the coalesced writes stay ours, untimed
        assert getattr(timed, name) is getattr(ours, name)
    assert hooks.timed_connection_class(instrument.Recorder(), timed).__mro__[1] is ours


class Socketless(connection.CompiledFraming, Connection):
    """Our framing mixin on a driver ``Connection`` without a socket: ``process_msg`` burns
    ``burn_ns`` of CPU per frame and records it; READY turns v5 segments on, as the handshake does."""

    #: far above what framing a few frames takes, a busy machine's slower clocks included
    burn_ns = 2_000_000

    def __init__(self, protocol_version: int) -> None:
        super().__init__("127.0.0.1", protocol_version=protocol_version)
        self.bodies: list[bytes] = []

    def process_msg(self, header, body):
        until = time.thread_time_ns() + self.burn_ns
        while time.thread_time_ns() < until:
            pass
        self.bodies.append(body)
        if body == READY and ProtocolVersion.has_checksumming_support(self.protocol_version):
            self._enable_checksumming()

    def feed(self, chunk: bytes) -> None:
        self._iobuf.write(chunk)
        self.process_io_buffer()


@pytest.fixture(params=sorted(FRAMINGS), ids=sorted(FRAMINGS))
def reader(request):
    """``Socketless`` reading with the compiled framing (``c``) or its twin (``py``)."""
    module = importlib.import_module(FRAMINGS[request.param])
    return type("Reader", (Socketless,), {"process_io_buffer": module.process_io_buffer})


def frame(stream: int, body: bytes, version: int = 5) -> bytes:
    return struct.pack(">BBhBi", version | 0x80, 0, stream, 8, len(body)) + body


def test_our_read_loop_is_framing_and_each_frame_dispatch_nested_in_it(reader):
    rec = instrument.Recorder()
    conn = hooks.timed_connection_class(rec, reader)(4)
    bodies = [b"one", b"two", b"three"]
    conn.feed(b"".join(frame(k, b, version=4) for k, b in enumerate(bodies)))
    assert conn.bodies == bodies
    snap = rec.snapshot()
    assert (snap["calls"]["framing"], snap["calls"]["dispatch"]) == (1, 3)
    # exclusive regions: the frames' dispatch is not framing's too
    assert snap["regions_ns"]["dispatch"] >= 3 * Socketless.burn_ns
    assert 0 < snap["regions_ns"]["framing"] < Socketless.burn_ns


def test_v5_segments_are_encoded_by_a_timed_copy_of_our_codec_and_read_by_our_loop(reader):
    rec = instrument.Recorder()
    conn = hooks.timed_connection_class(rec, reader)(5)
    conn.feed(frame(0, READY))  # the handshake's last frame: our codec, then the timed copy of it
    codec, shared = conn._segment_codec, connection.our_codec(segment.SegmentCodec())
    assert type(codec) is type(shared) is connection.framing.SegmentCodec
    assert codec is not shared and "encode" not in vars(shared)  # this connection's own copy is timed
    assert codec.encode.__name__ == "_pf_framing"
    assert connection.framing.codec_is_standard(codec)  # so our loop reads the segments, not the driver's
    before = calls(rec)["framing"]
    wire = io.BytesIO()
    codec.encode(wire, frame(1, b"first") + frame(2, b"second"))
    assert calls(rec)["framing"] == before + 1
    conn.feed(wire.getvalue())
    assert conn.bodies == [READY, b"first", b"second"] and not conn.is_defunct
    assert calls(rec)["framing"] == before + 2 and calls(rec)["dispatch"] == 3


# --- our timer services ------------------------------------------------------------------------

@pytest.fixture
def libev_loop(monkeypatch):
    """Our libev timer service on a fake driver loop that also has the driver's timer heap."""
    loop = FakeDriverLoop()
    loop._timers = TimerManager()
    monkeypatch.setattr(connection._libevreactor, "_global_loop", loop)
    monkeypatch.setattr(connection, "_libev_timers", connection.LibevTimers(loop, FakeLibev))
    return loop


def test_libev_our_timers_are_timed_where_they_are_made_and_where_they_fire(libev_loop):
    rec = instrument.Recorder()
    timed = hooks.timed_connection_class(rec, connection.TimerQueueLibevConnection)
    assert hooks.ours_timer_service(timed) is connection._libev_timers.service
    assert hooks.time_timer_service(rec, timed)
    fired = []
    timed.create_timer(0.0, lambda: fired.append("due"))
    timed.create_timer(30.0, lambda: fired.append("later"))
    assert calls(rec)["timers"] == 2
    connection._libev_timers.turn.timer.callback()  # libev calls it when our reactor timer expires
    assert fired == ["due"] and calls(rec)["timers"] == 3
    libev_loop._timers.service_timeouts()  # the driver's own heap, which its loop services every turn
    assert calls(rec)["timers"] == 4
    hooks.time_timer_service(instrument.Recorder(), timed)  # again: one wrapper, the new recorder's
    assert connection._libev_timers.service.fire.__wrapped__.__name__ == "fire"


def test_before_the_reactor_runs_there_is_no_service_to_time(monkeypatch):
    monkeypatch.setattr(connection, "_libev_timers", None)
    monkeypatch.setattr(connection._libevreactor, "_global_loop", None)
    assert hooks.ours_timer_service(connection.TimerQueueLibevConnection) is None
    assert hooks.ours_timer_service(LibevConnection) is None


def test_asyncio_our_timers_are_timed_and_the_timed_class_shares_the_service():
    loop = asyncio.new_event_loop()
    try:
        ours = type("OnAFreshLoop", (connection.TimerQueueAsyncioConnection,),
                    {"_loop": loop, "_loop_thread": None, "_pyfactories_timers": None})
        rec = instrument.Recorder()
        timed = hooks.timed_connection_class(rec, ours)
        assert hooks.time_timer_service(rec, timed)
        service = ours._pyfactories_timers.service
        fired = []
        timed.create_timer(0.0, lambda: fired.append("due"))
        assert timed._timers().service is service and service.queued() == 1
        ours._pyfactories_timers._on_timer()  # the loop's call_at handle
        assert fired == ["due"] and calls(rec)["timers"] == 2
    finally:
        loop.close()


# --- sampling without markers (attach): our connection's frames ---------------------------------

def test_attach_classifies_our_connection_as_the_drivers_reactor():
    pkg, io_ = "/x/pyfactories", "/x/cassandra/io/libevreactor.py"
    head = f"thread (1): event_loop;LibevLoop._run_loop ({io_}:104)"
    cases = {
        f"{head};LibevTurn.on_timer ({pkg}/connection/_libev_turn_py.py:180);TimerService.fire ({pkg}/connection/_timers_py.py:140) 1": "timers",
        f"thread (2): MainThread;main (/a/b.py:1);TimerQueueLibevConnection.create_timer ({pkg}/connection/__init__.py:210);"
        f"TimerService.add ({pkg}/connection/_timers_py.py:100) 1": "timers",
        f"{head};LibevTurn.__call__ ({pkg}/connection/_libev_turn_py.py:140) 1": "socket",
        f"{head};LibevTurn.__call__ ({pkg}/connection/_libev_turn_py.py:140);LibevLoop._loop_will_run ({io_}:180) 1": "socket",
        f"{head};0x2 (/x/pyfactories/connection/_libev_turn.cpython-311-x86_64-linux-gnu.so) 1": "socket",
        f"{head};CoalescedWrites.handle_read ({pkg}/connection/_writes_py.py:70);CoalescedWrites._write_queued "
        f"({pkg}/connection/_writes_py.py:110) 1": "socket",
        f"{head};CoalescedWrites.handle_read ({pkg}/connection/_writes_py.py:70);process_io_buffer ({pkg}/connection/_framing_py.py:216);"
        f"_segments ({pkg}/connection/_framing_py.py:270) 1": "framing",
        f"thread (2): MainThread;main (/a/b.py:1);CoalescedWrites.push ({pkg}/connection/_writes_py.py:60) 1": "request",
        f"{head};0x1 (/x/pyfactories/connection/_framing.cpython-311-x86_64-linux-gnu.so) 1": "framing",
        f"{head};named_tuple_factory ({pkg}/rows/_rows_py.py:40) 1": "row_factory",  # the rest of the package
        # the leaner futures' twin: building a request, finishing one
        f"thread (2): MainThread;main (/a/b.py:1);LeanCreate.__call__ ({pkg}/futures/_futures_py.py:200);"
        f"create_future ({pkg}/futures/_futures_py.py:150) 1": "request",
        f"{head};add_callbacks ({pkg}/futures/_callbacks_py.py:90) 1": "request",
        f"{head};_finish ({pkg}/futures/_callbacks_py.py:60) 1": "dispatch",
        f"{head};Completion.__call__ ({pkg}/futures/_callbacks_py.py:230);cassandra_set_result "
        f"({pkg}/futures/_futures_py.py:240);return_connection ({pkg}/futures/_pools_py.py:120) 1": "dispatch",
        f"{head};Completion.__call__ ({pkg}/futures/_callbacks_py.py:230);set_result ({pkg}/futures/_scylla_py.py:140);"
        f"take_answer ({pkg}/futures/_callbacks_py.py:250) 1": "dispatch",
        f"thread (2): MainThread;main (/a/b.py:1);cassandra_query ({pkg}/futures/_futures_py.py:190) 1": "request",
        f"thread (2): MainThread;main (/a/b.py:1);query ({pkg}/futures/_scylla_py.py:90);"
        f"lend_unsharded ({pkg}/futures/_pools_py.py:60) 1": "request",
        f"thread (2): MainThread;main (/a/b.py:1);query ({pkg}/futures/_scylla_py.py:90);"
        f"pool_for ({pkg}/futures/_callbacks_py.py:230) 1": "request",
        # awaiting (pyfactories.aio): an answer handed to the loop, and finished there, is dispatch
        f"{head};_finish ({pkg}/futures/_callbacks_py.py:60);Awaiter.on_result ({pkg}/aio/_aio_py.py:130);"
        f"Waker.post ({pkg}/aio/_aio_py.py:60) 1": "dispatch",
        f"thread (2): MainThread;run ({pkg}/aio/_aio_py.py:1);Waker.drain ({pkg}/aio/_aio_py.py:80);"
        f"settle ({pkg}/aio/_aio_py.py:90) 1": "dispatch",
        f"thread (2): MainThread;main (/a/b.py:1);result_of ({pkg}/aio/_aio_py.py:150) 1": "request",
        f"thread (2): MainThread;main (/a/b.py:1);0x1 (/x/pyfactories/aio/_aio.cpython-311-x86_64-linux-gnu.so) 1":
            "dispatch",
    }
    for line, category in cases.items():
        (stack,) = parse_raw([line])
        assert categories.classify(stack, by_module=True) == category, line


@pytest.mark.parametrize("ours", [connection.TimerQueueLibevConnection, connection.TimerQueueAsyncioConnection])
def test_the_timed_class_encodes_as_ours_and_times_it_as_encode(ours):
    """Under the profiler the request's encoder is the timed handler's (a wrapper of the driver's):
    our ``send_msg`` still encodes EXECUTE frames itself, the driver's bytes, timed as encode."""
    from cassandra import ConsistencyLevel
    from cassandra.protocol import ExecuteMessage, ProtocolHandler

    rec = instrument.Recorder()
    timed_conn = hooks.timed_connection_class(rec, ours)
    handler = instrument.timed_handler(rec, ProtocolHandler)
    pushed = []
    conn = timed_conn.__new__(timed_conn)
    Connection.__init__(conn, "127.0.0.1", protocol_version=4)
    conn.push = pushed.append
    msg = ExecuteMessage(b"id", [b"v", None], ConsistencyLevel.ONE)
    before = rec.snapshot()
    conn.send_msg(msg, 5, cb=None, encoder=handler.encode_message, decoder=handler.decode_message)
    d = instrument.delta(before, rec.snapshot())
    assert pushed == [ProtocolHandler.encode_message(msg, 5, 4, None, False)]
    assert d["calls"]["encode"] == 1  # send_msg alone: the handler's own timed encode was not called
