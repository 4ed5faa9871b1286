"""The profiler with pyfactories' connection classes against the real node: every region of the
event loop is timed on them (framing, dispatch, timers with the timer service's firing), and a
harness run measures them by both methods.

Kept short; the harness run uses the keyspace of the other profiling tests and leaves its data."""

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from profiling.cluster import connect
from profiling.harness.client import connection_class, default_reactor
from profiling.harness.runner import Harness, Options
from profiling.harness.session import prepare_data
from profiling.timing import hooks, instrument
from pyfactories import connection
from tests.profiling.settle import settled_delta

pytestmark = pytest.mark.integration

KEYSPACE = "pyfactories_profile_test"
EVENT_LOOP_REGIONS = ("deserialization", "framing", "dispatch", "timers")


@pytest.mark.parametrize("reactor", ["libev", "asyncio"])
def test_a_session_on_our_connection_is_timed_in_every_region(contact, reactor):
    ours = connection_class(reactor, "pyfactories")
    cluster, session = connect(contact, connection_class=ours, protocol_version=5)
    try:
        rec = instrument.Recorder()
        hooks.instrument_session(session, rec)
        timed = cluster.connection_class
        assert timed.__mro__[1] is ours
        conns = [c for p in session._pools.values() for c in p.get_connections()]
        assert conns and all(type(c) is timed for c in conns)
        for conn in conns:  # protocol v5: each connection's own copy of our codec, its encode timed
            assert type(conn._segment_codec) is connection.framing.SegmentCodec
            assert conn._segment_codec.encode.__name__ == "_pf_framing"
        before = rec.snapshot()
        n = 20
        for _ in range(n):
            session.execute_async("SELECT release_version FROM system.local").result()
        d = settled_delta(rec, before, dict.fromkeys(EVENT_LOOP_REGIONS, n))
        for region in (*EVENT_LOOP_REGIONS, "encode", "request"):
            assert d["calls"][region] >= n, region
            assert d["regions_ns"][region] > 0, region
        assert d["regions_on_loop_ns"]["dispatch"] == d["regions_ns"]["dispatch"]  # responses: on the loop
        assert d["regions_on_loop_ns"]["framing"] > 0  # our read loop, on the loop's thread
    finally:
        cluster.shutdown()


@pytest.mark.parametrize("reactor", ["libev", "asyncio"])
def test_our_timer_service_fires_inside_the_timers_region_on_the_loop(contact, reactor):
    cluster, session = connect(contact, connection_class=connection_class(reactor, "pyfactories"))
    try:
        rec = instrument.Recorder()
        hooks.instrument_session(session, rec)
        assert hooks.ours_timer_service(cluster.connection_class).fire.__name__ == "_pf_timer"
        fired = threading.Event()
        seen = {}

        def expired():
            callers, frame = [], sys._getframe(1)
            while frame is not None:
                callers.append(frame.f_code.co_name)
                frame = frame.f_back
            seen.update(thread=threading.current_thread().name, callers=callers)
            fired.set()

        before = rec.snapshot()
        cluster.connection_class.create_timer(0.0, expired)
        assert fired.wait(10)
        d = settled_delta(rec, before, {"timers": 2})
        assert seen["thread"] in instrument.LOOP_THREAD_NAMES
        # run by our service (compiled, its fire leaves no Python frame), inside its timed wrapper
        assert seen["callers"][0] in ("fire", "_pf_timer") and "_pf_timer" in seen["callers"][:2]
        assert d["calls"]["timers"] >= 2 and d["regions_on_loop_ns"]["timers"] > 0
    finally:
        cluster.shutdown()


def test_a_harness_run_on_our_connection_measures_its_event_loop_both_ways(contact, tmp_path):
    opts = Options(hosts=list(contact.hosts), port=contact.port, keyspace=KEYSPACE, keep_data=True,
                   out=str(tmp_path), connection_class=default_reactor(), connection="pyfactories",
                   protocol_version=5, warmup=200, patterns=["callback_full_pipeline"], factories=["tuple"],
                   kinds=["read"], num_ops=3000, profiler="pyspy", rate=1000, warmup_s=0)
    prepare_data(opts)
    (row,) = Harness(opts).run()
    assert not row.get("failed") and (row["ops"], row["errors"]) == (3000, 0), row
    assert row["connection"] == "pyfactories"
    # the sampled stacks show our connection's read handler on the event loop: the run used our class
    stacks = (tmp_path / row["artifacts"]["raw"]).read_text()
    assert "pyfactories/connection/_writes_py.py" in stacks and "_pf_framing" in stacks
    calls = row["instrumented_ns"]["calls"]
    assert min(calls["framing"], calls["dispatch"], calls["timers"], calls["deserialization"]) >= row["ops"]
    for category in EVENT_LOOP_REGIONS:
        assert row["shares"]["instrumented"][category] > 0, category
    # a timer costs a few microseconds: the sampled method sees it only now and then
    for category in ("deserialization", "framing", "dispatch"):
        assert row["shares"]["sampled"][category] > 0, (category, row["shares"]["sampled"])
    assert row["agreement_pts"] is not None
    print(f"our connection: Δmax {row['agreement_pts']:.1f} pts; instrumented/sampled "
          + ", ".join(f"{k} {row['shares']['instrumented'][k]:.2f}/{row['shares']['sampled'][k]:.2f}"
                      for k in row["shares"]["instrumented"]))


def test_the_raw_stacks_of_the_drivers_connection_do_not_show_ours(contact, tmp_path):
    """The check above tells the classes apart: the driver's connection shows none of our frames."""
    opts = Options(hosts=list(contact.hosts), port=contact.port, keyspace=KEYSPACE, keep_data=True,
                   out=str(tmp_path), connection_class=default_reactor(), warmup=100,
                   patterns=["callback_full_pipeline"], factories=["tuple"], kinds=["read"], num_ops=1000,
                   profiler="pyspy", rate=1000, warmup_s=0)
    prepare_data(opts)
    (row,) = Harness(opts).run()
    assert not row.get("failed") and row["connection"] == "driver"
    stacks = (Path(tmp_path) / row["artifacts"]["raw"]).read_text()
    assert "_pf_framing" in stacks and "pyfactories/connection/_writes_py.py" not in stacks


def test_record_times_a_program_that_chose_our_connection(contact, tmp_path):
    """``record`` on a program of its own that builds its Cluster with ``connection.cluster_options()``."""
    from tests.profiling.test_service import ROOT, standin

    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "profiling", "record", "--rate", "500", "--out", str(out), "--",
                           *standin(contact, 4), "--named-tuples", "--pyfactories-connection"],
                          cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = json.loads((out / "summary.json").read_text())
    assert "driver reactor: TimerQueueLibevConnection" in (out / "summary.md").read_text()
    assert "pyfactories/connection/_writes_py.py" in (out / row["artifacts"]["raw"]).read_text()
    calls = row["instrumented_ns"]["calls"]
    assert min(calls["framing"], calls["dispatch"], calls["timers"], calls["request"]) > 0.9 * row["ops"] > 0
    for category in EVENT_LOOP_REGIONS:
        assert row["shares"]["instrumented"][category] > 0, category
    for category in ("deserialization", "framing", "dispatch"):
        assert row["shares"]["sampled"][category] > 0, (category, row["shares"]["sampled"])
