"""The instrumentation's hooks into the driver: connections, segment codec, timers, request path."""

import sys
import types

import pytest
from cassandra.connection import TimerManager
from cassandra.segment import SegmentCodec

from profiling.sampling import categories
from profiling.timing import hooks, instrument
from tests.profiling.settle import settled_delta


class Reactor:
    """Stands for a reactor connection class: the methods the hooks time, doing little."""

    shared_codec = SegmentCodec()

    def process_io_buffer(self):
        return self.process_msg(b"header", b"body")

    def process_msg(self, header, body):
        return header + body

    @classmethod
    def create_timer(cls, timeout, callback):
        return (cls, timeout, callback)

    def _enable_checksumming(self):
        self._segment_codec = self.shared_codec


def calls(rec):
    return rec.snapshot()["calls"]


def test_timed_connection_class_times_framing_dispatch_and_timers():
    rec = instrument.Recorder()
    timed = hooks.timed_connection_class(rec, Reactor)
    assert issubclass(timed, Reactor)
    conn = timed()
    assert conn.process_io_buffer() == b"headerbody"
    assert timed.create_timer(10, print) == (timed, 10, print)
    counted = calls(rec)
    assert (counted["framing"], counted["dispatch"], counted["timers"]) == (1, 1, 1)
    # timing a timed class again times the driver's class once, with the new recorder
    again = instrument.Recorder()
    retimed = hooks.timed_connection_class(again, timed)
    assert retimed.__mro__[1] is Reactor
    retimed().process_io_buffer()
    assert calls(again)["framing"] == 1 and calls(rec)["framing"] == 1


def test_each_connection_gets_its_own_timed_segment_codec():
    rec = instrument.Recorder()
    conn = hooks.timed_connection_class(rec, Reactor)()
    conn._enable_checksumming()
    assert conn._segment_codec is not Reactor.shared_codec and "encode" not in vars(Reactor.shared_codec)
    mine, plain = _encoded(conn._segment_codec), _encoded(Reactor.shared_codec)
    assert mine == plain and calls(rec)["framing"] == 1
    hooks.time_segment_codec(instrument.Recorder(), conn)  # again: one wrapper, around the driver's encode
    assert conn._segment_codec.encode.__wrapped__.__self__ is not None
    assert conn._segment_codec.encode.__wrapped__.__name__ == "encode"


def _encoded(codec):
    import io

    buffer = io.BytesIO()
    codec.encode(buffer, b"\x05\x00\x00\x01\x08\x00\x00\x00\x00")
    return buffer.getvalue()


def test_timer_service_of_a_reactor_with_a_timer_manager(monkeypatch):
    module = types.ModuleType("fake_reactor")
    module._global_loop = types.SimpleNamespace(_timers=TimerManager())
    monkeypatch.setitem(sys.modules, "fake_reactor", module)
    reactor = type("FakeReactorConnection", (Reactor,), {"__module__": "fake_reactor"})
    rec = instrument.Recorder()
    assert hooks.time_timer_service(rec, hooks.timed_connection_class(rec, reactor))
    assert module._global_loop._timers.service_timeouts() is None and calls(rec)["timers"] == 1
    without = type("NoTimerManager", (Reactor,), {"__module__": __name__})
    assert not hooks.time_timer_service(rec, without)


def test_hook_wrappers_carry_the_markers_sampling_looks_for():
    rec = instrument.Recorder()
    timed = hooks.timed_connection_class(rec, Reactor)
    conn = timed()
    conn._enable_checksumming()
    wrappers = {timed.process_io_buffer: "framing", timed.process_msg: "dispatch",
                timed.create_timer.__func__: "timers", conn._segment_codec.encode: "framing"}
    for wrapper, category in wrappers.items():
        code = wrapper.__code__
        assert code.co_filename.endswith(categories._MARKER_FILE)
        assert categories.MARKERS[code.co_name] == category


@pytest.mark.integration
def test_a_session_is_timed_in_every_region(contact):
    from profiling.harness.client import connection_class, default_reactor
    from profiling.cluster import connect

    cluster, session = connect(contact, connection_class=connection_class(default_reactor()))
    try:
        rec = instrument.Recorder()
        hooks.instrument_session(session, rec)
        before = rec.snapshot()
        n = 20
        for _ in range(n):
            session.execute_async("SELECT release_version FROM system.local").result()
        d = settled_delta(rec, before, {"framing": n, "dispatch": n, "deserialization": n})
        assert all(type(c).__name__.startswith("Timed") for p in session._pools.values()
                   for c in p.get_connections())
        for region in ("deserialization", "encode", "framing", "dispatch", "timers", "request"):
            assert d["calls"][region] >= n, region
            assert d["regions_ns"][region] > 0, region
        assert d["regions_on_loop_ns"]["dispatch"] == d["regions_ns"]["dispatch"]  # responses: on the loop
        shares = instrument.shares(d)
        assert set(shares) == set(instrument.CATEGORIES) and sum(shares.values()) == pytest.approx(1)
    finally:
        cluster.shutdown()


@pytest.mark.integration
@pytest.mark.parametrize("first", ["tuple", "pf_ordered_dict"])
def test_a_fast_path_session_is_timed_on_the_route_each_request_takes(contact, first):
    """A fast-path choice applied after another factory gets its own rows, still built while decoding
    under the instrumentation (its decode timed), and the driver's was_applied still works."""
    from cassandra.query import tuple_factory

    from profiling.cluster import connect
    from profiling.factories import resolve
    from pyfactories import decoding

    cluster, session = connect(contact)
    try:
        resolve(first).apply(session)
        resolve("fastpath_dict").apply(session)
        rec = instrument.Recorder()
        hooks.instrument_session(session, rec)
        before = rec.snapshot()
        n = 5
        for _ in range(n):
            rs = session.execute("SELECT release_version FROM system.local")
            assert type(rs.one()) is dict
            handler = rs.response_future._protocol_handler
            assert handler.__name__.startswith("Timed") and issubclass(handler, decoding.handler("dict"))
            assert rs.response_future.row_factory is tuple_factory
        d = instrument.delta(before, rec.snapshot())
        assert d["calls"]["deserialization"] >= n
        resolve(first).apply(session)  # and back: the fast path is off, the first factory's rows again
        assert not decoding.is_enabled(session)
        assert type(session.execute("SELECT release_version FROM system.local").one()).__name__ == (
            "tuple" if first == "tuple" else "OrderedDict")
    finally:
        cluster.shutdown()
