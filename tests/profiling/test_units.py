"""Stack classification, summary math, reports and the CLI, without a server."""

import json
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from profiling.__main__ import DEFAULT_FACTORIES, DEFAULT_PATTERNS, build_parser, main, options
from profiling.harness.patterns import Tally
from profiling.report import flame, summary
from profiling.sampling import categories
from profiling.sampling.stacks import parse_raw
from profiling.timing import instrument
from profiling.timing.instrument import CATEGORIES

PY = "/usr/lib/python3.11"
INSTR = instrument.__file__  # where the timed regions live, wherever the checkout is
LOOP_HEAD = (f"Thread.run ({PY}/threading.py:982);"
             "LibevLoop._run_loop (/x/cassandra/io/libevreactor.py:104);"
             "LibevConnection.handle_read (/x/cassandra/io/libevreactor.py:372)")


def raw(*lines):
    return list(parse_raw(lines))


def one(line):
    (stack,) = raw(line)
    return stack


def shares(**nonzero):
    """Every category's share: those given, the others 0."""
    return {**dict.fromkeys(CATEGORIES, 0), **nonzero}


# -- parsing and classification ---------------------------------------------------------------

def test_parse_raw_threads_processes_and_counts():
    stacks = raw(
        "thread (101): MainThread;main (/a/b.py:3);f (/a/b.py:9) 7\n",
        'process 5:"python -m x";thread (0x7f): event_loop;g (/a/c.py:1) 2\n',
        "garbage line\n",
    )
    assert [(s.process, s.tid, s.thread, s.count) for s in stacks] == [
        (None, "101", "MainThread", 7), ('process 5:"python -m x"', "0x7f", "event_loop", 2)]
    assert stacks[0].frames == ["main (/a/b.py:3)", "f (/a/b.py:9)"]


def test_innermost_marker_wins():
    # a callback on the event loop starting the next request: its bind is encode
    s = one(f"thread (1): event_loop;{LOOP_HEAD};"
            f"timed_row_factory.<locals>._pf_row_factory ({INSTR}:150);"
            f"timed_bind.<locals>._pf_bind ({INSTR}:130);bind (/x/cassandra/query.py:5) 3")
    assert categories.classify(s) == "encode"
    assert categories.frame_categories(s)[:3] == ["socket", "socket", "socket"]
    assert categories.frame_categories(s)[-3:] == ["row_factory", "encode", "encode"]


@pytest.mark.parametrize("marker, category", [
    ("timed_handler.<locals>.TimedProtocolHandler.decode_message", "deserialization"),
    ("timed_handler.<locals>.TimedProtocolHandler.encode_message", "encode"),
    ("timed_row_factory.<locals>._pf_row_factory", "row_factory"),
    ("_pf_wait", "wait"),
    ("timed_connection_class.<locals>._pf_framing", "framing"),
    ("_pf_dispatch", "dispatch"),
    ("_pf_timer", "timers"),
    ("_pf_request", "request"),
])
def test_markers(marker, category):
    assert categories.classify(one(f"thread (1): MainThread;{marker} ({INSTR}:10);x (/y/z.py:1) 1")) == category


def test_marker_names_outside_instrument_do_not_count():
    s = one("thread (1): MainThread;decode_message (/x/cassandra/protocol.py:10) 1")
    assert categories.classify(s) == "other"


def test_thread_base_categories():
    assert categories.classify(one(f"thread (1): event_loop;{LOOP_HEAD} 1")) == "socket"
    assert categories.classify(one(f"thread (1): asyncio_thread;{LOOP_HEAD} 1")) == "socket"
    assert categories.classify(one("thread (1): MainThread;main (/a/b.py:1) 1")) == "other"


@pytest.mark.parametrize("line", [
    # native: blocked in a condition variable, in select, sleeping, waiting for the GIL
    "thread (1): MainThread;Event.wait (/t/threading.py:629);lock_PyThread_acquire_lock (libpython3.11.so);"
    "PyThread_acquire_lock_timed (libpython3.11.so);0x7f01 (libc.so.6) 1",
    f"thread (1): event_loop;{LOOP_HEAD};ev_run (libev.so);select (libc.so.6) 1",
    "thread (1): Task Scheduler;0x7f (cluster.cpython-311-x86_64-linux-gnu.so);clock_nanosleep (libc.so.6) 1",
    "thread (1): MainThread;f (/a/b.py:1);take_gil (libpython3.11.so);pthread_cond_timedwait (libc.so.6) 1",
    # Python frames only: the innermost one blocks in C
    "thread (1): MainThread;_pf_wait (/w/profiling/timing/instrument.py:9);Event.wait (/t/threading.py:629);"
    "Condition.wait (/t/threading.py:327) 1",
    "thread (1): event_loop;Thread.run (/t/threading.py:982);LibevLoop._run_loop (/x/io/libevreactor.py:104) 1",
    "thread (1): ThreadPoolExecutor-0_0;_worker (/t/concurrent/futures/thread.py:81) 1",
    "thread (1): MainThread 1",
    # uvloop's loop (C) under asyncio's Runner, here uvicorn's; the standard loop waits in selectors.py
    "thread (1): MainThread;main (/a/app.py:40);asyncio_run (/v/uvicorn/_compat.py:30);run (/t/asyncio/runners.py:118) 1",
    "thread (1): MainThread;run (/t/asyncio/base_events.py:640);_run_once (/t/asyncio/base_events.py:1898);"
    "select (/t/selectors.py:468) 1",
])
def test_idle_samples_are_dropped(line):
    assert categories.classify(one(line)) is None


def test_busy_native_and_python_samples_are_kept():
    assert categories.classify(one(f"thread (1): event_loop;{LOOP_HEAD};0x7f (connection.so);"
                                 "memcpy (libc.so.6) 1")) == "socket"
    assert categories.classify(one("thread (1): MainThread;Condition.notify (/t/threading.py:382) 1")) == "other"
    # an asyncio loop at work: its own frames, or a task's, above the Runner
    assert categories.classify(one("thread (1): MainThread;run (/t/asyncio/runners.py:118);"
                                   "_run_once (/t/asyncio/base_events.py:1922) 1")) == "other"
    assert categories.classify(one("thread (1): MainThread;run (/t/asyncio/runners.py:118);"
                                   "handler (/a/app.py:12) 1")) == "other"


# -- shares ----------------------------------------------------------------------------------

def test_sample_shares_unweighted_and_weighted():
    stacks = raw(
        f"thread (1): event_loop;{LOOP_HEAD} 30\n",
        f"thread (1): event_loop;{LOOP_HEAD};_pf_row_factory ({INSTR}:1) 10\n",
        "thread (2): MainThread;main (/a/b.py:1) 60\n",
        "thread (3): pattern-0;main (/a/b.py:1);_pf_bind (/w/profiling/timing/instrument.py:1) 10\n",
    )
    s = categories.Samples.of(stacks)
    assert s.busy == 110
    plain = s.shares()
    assert plain["other"] == pytest.approx(60 / 110)
    # thread 1 used 400 ns, thread 2 only 100 ns; thread 3 ended (not listed): it gets the rest
    w = s.shares({"1": {"name": "event_loop", "ns": 400}, "2": {"name": "MainThread", "ns": 100}},
                 total_ns=600)
    assert w == pytest.approx(shares(row_factory=100 / 600, encode=100 / 600, socket=300 / 600,
                                     other=100 / 600))
    assert sum(w.values()) == pytest.approx(1)


def test_kernel_cpu_goes_to_socket_on_the_loop_and_to_wait_elsewhere():
    s = categories.Samples.of(raw(
        f"thread (1): event_loop;{LOOP_HEAD};_pf_row_factory ({INSTR}:1) 10\n",
        "thread (2): MainThread;main (/a/b.py:1) 10\n"))
    w = s.shares({"1": {"name": "event_loop", "ns": 400, "sys_ns": 100},
                  "2": {"name": "MainThread", "ns": 100, "sys_ns": 500}}, total_ns=500)
    # loop: 300 user -> row factory, 100 kernel -> socket; main: kernel capped at its CPU -> wait
    assert w == pytest.approx(shares(row_factory=0.6, socket=0.2, wait=0.2))


def test_samples_inside_a_system_call_stand_for_kernel_cpu(tmp_path):
    src = tmp_path / "reactor.py"
    src.write_text("def handle_write(self):\n    sent = self._socket.send(msg)\n    n = len(msg)\n")
    sending = f"thread (1): event_loop;handle_write ({src}:2) 30\n"
    stacks = raw(sending, f"thread (1): event_loop;handle_write ({src}:3) 10\n",
                 f"thread (1): event_loop;{LOOP_HEAD};_pf_row_factory ({INSTR}:1) 10\n")
    assert categories.in_syscall([categories.parse_frame(f) for f in stacks[0].frames])
    assert not categories.in_syscall([categories.parse_frame(f) for f in stacks[1].frames])
    assert categories.in_syscall([categories.parse_frame(f) for f in one(
        f"thread (1): event_loop;{LOOP_HEAD};0x7f (connection.so);__libc_send (libc.so.6) 1").frames])
    s = categories.Samples.of(stacks)
    assert s.busy == 50 and s.in_kernel == {"1": {"socket": 30}}
    # 200 ns of user CPU over the 20 samples outside the send; the 100 kernel ns go to socket
    w = s.shares({"1": {"name": "event_loop", "ns": 300, "sys_ns": 100}}, total_ns=300)
    assert w == pytest.approx(shares(row_factory=1 / 3, socket=2 / 3))
    assert s.shares()["socket"] == pytest.approx(40 / 50)  # unweighted: every busy sample counts


def test_loop_kernel_cpu_is_split_by_the_regions_making_the_system_calls(tmp_path):
    """A region's clock counts the kernel time of its calls (the thread clock's own reads, a
    wake-up): the sampled method gives the loop's kernel CPU to the regions where it samples
    system calls, in the same proportions."""
    clock_line = next(n for n, text in enumerate(Path(INSTR).read_text().splitlines(), 1)
                      if "= _clock()" in text)
    stacks = raw(f"thread (1): event_loop;{LOOP_HEAD};_pf_dispatch ({INSTR}:{clock_line}) 10\n",
                 f"thread (1): event_loop;{LOOP_HEAD};_pf_timer ({INSTR}:{clock_line}) 30\n",
                 f"thread (1): event_loop;{LOOP_HEAD};_pf_dispatch ({INSTR}:1);work (/x/y.py:1) 40\n",
                 f"thread (2): MainThread;main (/a/b.py:1);_pf_request ({INSTR}:{clock_line}) 5\n")
    s = categories.Samples.of(stacks)
    # a clock reading is half the region's, half its enclosing category's (see regionwindow)
    assert s.in_kernel == {"1": {"dispatch": 5, "timers": 15, "socket": 20},
                           "2": {"request": 2.5, "other": 2.5}}
    w = s.shares({"1": {"name": "event_loop", "ns": 800, "sys_ns": 400},
                  "2": {"name": "MainThread", "ns": 200, "sys_ns": 200}}, total_ns=1000)
    # loop: user 400 -> dispatch; kernel 400 -> dispatch 50, timers 150, socket 200;
    # main: kernel 200 -> request 100, other 100 (every thread's kernel CPU goes by its calls)
    assert w == pytest.approx(shares(dispatch=0.45, timers=0.15, socket=0.2, request=0.1, other=0.1))


def test_loop_kernel_cpu_by_sampled_system_calls_the_rest_spread_over_active_samples(tmp_path):
    """With the sampling's duration, each sample inside a system call stands for one interval
    of kernel CPU; wake sites (a send, a release) do not count; what no sample shows is spread
    over the samples of the thread active: busy ones by category, those where it sleeps socket."""
    src = tmp_path / "reactor.py"
    src.write_text("def f(self):\n    self._socket.send(m)\n    self._socket.recv(9)\n    lock.release()\n")
    clock_line = next(n for n, text in enumerate(Path(INSTR).read_text().splitlines(), 1)
                      if "= _clock()" in text)
    stacks = raw(f"thread (1): event_loop;{LOOP_HEAD};_pf_timer ({INSTR}:{clock_line}) 2\n",
                 f"thread (1): event_loop;f ({src}:3) 1\n",
                 f"thread (1): event_loop;f ({src}:2) 50\n",
                 f"thread (1): event_loop;_pf_dispatch ({INSTR}:1);f ({src}:4) 40\n",
                 f"thread (1): event_loop;_pf_dispatch ({INSTR}:1);work (/x/y.py:1) 7\n",
                 "thread (1): event_loop;LibevLoop._run_loop (/x/cassandra/io/libevreactor.py:104) 100\n")
    s = categories.Samples.of(stacks)
    assert s.seen == {"1": 200} and s.at_wake == {"1": {"socket": 50, "dispatch": 40}}
    # 200 samples in 2000 ns: 10 ns each; kernel 100 ns: the clock readings 2 x 10, half timers,
    # half socket (the loop outside the region), the receive 1 x 10 socket; the 70 unseen over
    # the 110 samples not at a wake site: 1 timers, 2 socket, 7 dispatch, 100 asleep (socket)
    w = s.shares({"1": {"name": "event_loop", "ns": 170, "sys_ns": 100}}, total_ns=170, wall_ns=2000)
    rest = 70 / 110
    assert w == pytest.approx(shares(dispatch=(70 + 7 * rest) / 170, timers=(10 + rest) / 170,
                                     socket=(20 + 102 * rest) / 170))
    # more samples in system calls than the kernel CPU: scaled down to it, nothing left over
    w = s.shares({"1": {"name": "event_loop", "ns": 100, "sys_ns": 15}}, total_ns=100, wall_ns=20000)
    assert w == pytest.approx(shares(dispatch=0.85, timers=0.05, socket=0.1))


def test_thread_with_cpu_but_no_samples_goes_to_its_base():
    s = categories.Samples.of(raw("thread (2): MainThread;main (/a/b.py:1) 5\n"))
    w = s.shares({"2": {"name": "MainThread", "ns": 50}, "9": {"name": "event_loop", "ns": 50}}, 100)
    assert w["socket"] == pytest.approx(0.5) and w["other"] == pytest.approx(0.5)


def _delta(process, loop, regions, on_loop):
    """A delta with the given region times (by name; the others 0), all threads and on the loop."""
    return {"process_ns": process, "loop_ns": loop, "loop_threads": 1, "threads": {},
            "regions_ns": {k: regions.get(k, 0) for k in instrument.REGIONS},
            "regions_on_loop_ns": {k: on_loop.get(k, 0) for k in instrument.REGIONS},
            "calls": dict.fromkeys(instrument.REGIONS, 1)}


def test_instrumented_shares():
    # 1000 ns of CPU; event loop 600 of which decode 200, rows 100, framing 60, dispatch 40, timers 20,
    # request 30 (a callback's next request); main thread encodes 50, requests 30, times 10, waits 50
    regions = dict(deserialization=200, row_factory=100, encode=50, framing=60, dispatch=40, timers=30,
                   request=60, wait=50)
    on_loop = dict(deserialization=200, row_factory=100, framing=60, dispatch=40, timers=20, request=30)
    d = _delta(1000, 600, regions, on_loop)
    assert instrument.shares(d) == pytest.approx(shares(
        deserialization=0.2, row_factory=0.1, encode=0.05, framing=0.06, dispatch=0.04, timers=0.03,
        request=0.06, socket=0.15, wait=0.05, other=0.26))


def test_instrumented_shares_clamped_and_combined():
    # clock granularity: the parts exceed the whole; still fractions summing to 1
    shares_ = instrument.shares(_delta(100, 90, {"deserialization": 60, "row_factory": 50},
                                       {"deserialization": 60, "row_factory": 50}))
    assert sum(shares_.values()) == pytest.approx(1) and min(shares_.values()) >= 0
    one_process = _delta(1000, 600, {"deserialization": 200, "dispatch": 100, "wait": 50},
                         {"deserialization": 200, "dispatch": 100})
    both = instrument.combine([one_process] * 2)
    assert both["process_ns"] == 2000 and both["regions_ns"]["deserialization"] == 400
    assert instrument.shares(both) == pytest.approx(instrument.shares(one_process))
    assert instrument.shares(_delta(0, 0, {}, {})) == dict.fromkeys(CATEGORIES, 0.0)


def test_regions_are_exclusive_and_per_thread(monkeypatch):
    now = [0]

    def clock():
        now[0] += 10
        return now[0]

    monkeypatch.setattr(instrument, "_clock", clock)
    rec = instrument.Recorder()
    bind = instrument.timed_bind(rec, lambda values: values)
    assert rec.wait(bind, (1, 2)) == (1, 2)  # a bind inside a wait: 10 ns of bind, wait gets the rest
    st = rec.state()
    ns = dict(zip(instrument.REGIONS, st.ns))
    assert ns["encode"] == 10 and ns["wait"] == 20
    other = []
    t = threading.Thread(target=lambda: other.append(rec.wait(lambda: 5)))
    t.start()
    t.join()
    snap = rec.snapshot()
    assert snap["calls"]["wait"] == 2 and snap["regions_ns"]["wait"] == 30


def test_timed_handler_encodes_with_the_driver_and_counts():
    from cassandra import ConsistencyLevel
    from cassandra.protocol import ProtocolHandler, QueryMessage

    rec = instrument.Recorder()
    handler = instrument.timed_handler(rec, ProtocolHandler)
    msg = QueryMessage("SELECT * FROM system.local", ConsistencyLevel.ONE)
    plain = ProtocolHandler.encode_message(msg, 1, 4, None, False)
    assert handler.encode_message(msg, 1, 4, None, False) == plain
    assert rec.snapshot()["calls"]["encode"] == 1
    rf = instrument.timed_row_factory(rec, lambda names, rows: list(rows))
    assert rf(["a"], [(1,)]) == [(1,)] and rec.snapshot()["calls"]["row_factory"] == 1


# -- reports, flamegraphs, CLI -----------------------------------------------------------------

def _row(**kw):
    row = {"pattern": "sync", "workload": "read", "factory": "tuple", "ops": 90, "errors": 10,
           "throughput_ops_s": 450.0, "cpu_us_per_op": 300.0, "warnings": ["10 errors: {'InvalidRequest': 10}"],
           "shares": {"instrumented": shares(deserialization=0.2, row_factory=0.1, encode=0.1, framing=0.1,
                                             dispatch=0.1, timers=0.05, request=0.05, other=0.3),
                      "sampled": shares(deserialization=0.25, row_factory=0.1, encode=0.1, framing=0.06,
                                        dispatch=0.1, timers=0.05, request=0.04, other=0.3)},
           "artifacts": {"flamegraph": "a.svg"}}
    row["agreement_pts"] = summary.agreement(row["shares"])
    row.update(kw)
    return row


def test_report_shows_errors_and_agreement(tmp_path):
    row = _row()
    assert row["agreement_pts"] == pytest.approx(5.0)
    text = summary.table([row, _row(failed="boom")])
    assert "sync" in text and " 10 " in text and "20/25" in text and "FAILED" in text
    assert "10 errors" in summary.one_line(row)
    meta = {"command": "python -m profiling run", "python": "3.11"}
    assert json.loads(Path(summary.write_json([row], str(tmp_path))).read_text())[0]["errors"] == 10
    assert "| sync | read | tuple |" in Path(summary.write_markdown([row], str(tmp_path), meta)).read_text()
    page = Path(summary.write_html([row], str(tmp_path), meta)).read_text()
    assert 'href="a.svg"' in page and "10 errors" in page


def test_flamegraph_and_speedscope_are_well_formed(tmp_path):
    stacks = list(categories.cpu_stacks(raw(
        f"thread (1): event_loop;{LOOP_HEAD};0x1 (/x/cassandra/connection.cpython-311-x86_64-linux-gnu.so);"
        f"0x2 (/x/cassandra/connection.cpython-311-x86_64-linux-gnu.so);_pf_row_factory ({INSTR}:1) 4\n",
        "thread (2): MainThread;main (/a/b.py:1);f <&> {x} (/a/b.py:2) 2\n",
        f"thread (2): MainThread;_pf_wait ({INSTR}:1);Condition.wait ({PY}/threading.py:327) 9\n")))
    assert len(stacks) == 2  # the idle one is left out
    assert flame.normalize(stacks[0][0], stacks[0][2])[-2:] == [
        ("[cassandra/connection.so]", "socket"), ("_pf_row_factory (timing/instrument.py)", "row_factory")]
    flame.write_svg(str(tmp_path / "f.svg"), stacks, "t <1>")
    svg = ET.parse(tmp_path / "f.svg").getroot()
    assert svg.tag.endswith("svg") and "6 CPU samples" in ET.tostring(svg, encoding="unicode")
    flame.write_speedscope(str(tmp_path / "f.json"), stacks, "t")
    doc = json.loads((tmp_path / "f.json").read_text())
    assert sum(p["endValue"] for p in doc["profiles"]) == 6
    assert all(max(s) < len(doc["shared"]["frames"]) for p in doc["profiles"] for s in p["samples"])


def test_tally_counts_errors_by_kind_and_rows():
    class Page:
        current_rows = [(1,), (2,), (3,)]

    t = Tally()
    t.success()              # a write: no rows
    t.success(Page())        # a ResultSet: its current page
    t.success([(4,), (5,)])  # what a callback gets
    t.error(ValueError("x"))
    t.error(ValueError("y"))
    t.retry()
    for _ in range(6):
        t.sending()
    other = Tally()
    other.add(t.to_dict())
    assert other.to_dict() == {"sent": 6, "ok": 3, "rows": 5, "errors": 2, "retries": 1, "error_kinds": {"ValueError": 2},
                               "first_error": "ValueError: x"}


def _opts(*argv):
    args = build_parser().parse_args(["run", *argv])
    return options(args, ["run", *argv])


def test_default_set_and_narrowing():
    o = _opts("--default")
    assert o.patterns == DEFAULT_PATTERNS and o.factories == DEFAULT_FACTORIES and o.kinds == ["read", "write"]
    combos = o.combos()
    # the default configurations all act on writes too: reads and writes run every one of them
    assert len(combos) == 2 * len(DEFAULT_PATTERNS) * len(DEFAULT_FACTORIES)
    o = _opts("--full")
    combos = o.combos()
    assert ("write", "sync", "tuple") in combos and ("write", "sync", "cached_named_tuple") not in combos
    o = _opts("--default", "--pattern", "sync", "--factory", "dict", "--read")
    assert o.combos() == [("read", "sync", "dict")]
    o = _opts("--pattern", "async_errback", "--factory", "tests.profiling.slow_factory:slow_tuple_factory")
    assert o.factories == ["tests.profiling.slow_factory:slow_tuple_factory"]


def test_cli_errors_are_clear(capsys):
    assert main(["run", "--factory", "no_such_factory"]) == 2
    assert "unknown factory" in capsys.readouterr().err
    assert main(["run", "--factory", "json:no_such_function"]) == 2
    assert "cannot import row factory" in capsys.readouterr().err
    assert main(["run", "--connection-class", "gevent"]) == 2
    assert "'gevent' is not offered" in capsys.readouterr().err
    assert main(["run", "--threads", "0"]) == 2
    with pytest.raises(SystemExit):
        main(["run", "--pattern", "nope"])


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "multiprocess_concurrent" in out and "cached_named_tuple" in out and "libev" in out


def test_recordings_without_markers_are_classified_by_module():
    stacks = raw(
        f"thread (1): event_loop;{LOOP_HEAD};0x1 (/x/cassandra/row_parser.cpython-311-x86_64-linux-gnu.so) 4\n",
        f"thread (1): event_loop;{LOOP_HEAD};named_tuple_factory (/x/cassandra/query.py:80);"
        "namedtuple (/t/collections/__init__.py:1) 3\n",
        "thread (2): MainThread;main (/a/b.py:1);bind (/x/cassandra/query.py:500) 2\n",
        "thread (2): MainThread;main (/a/b.py:1) 1\n",
    )
    assert not categories.has_markers(stacks)
    s = categories.Samples.of(stacks)
    assert s.by_module
    assert s.counts() == shares(deserialization=4, row_factory=3, encode=2, other=1)
    # with markers in the recording, module names do not count
    marked = stacks + raw(f"thread (2): MainThread;_pf_wait ({INSTR}:1);busy (/a/b.py:1) 1\n")
    assert categories.Samples.of(marked).counts()["deserialization"] == 0


def test_recordings_without_markers_classify_the_drivers_python_frames():
    io = "/x/cassandra/io/libevreactor.py"
    cases = {
        f"thread (1): event_loop;{LOOP_HEAD};SegmentCodec.decode_header (/x/cassandra/segment.py:190);"
        "compute_crc24 (/x/cassandra/segment.py:50) 1": "framing",
        f"thread (2): MainThread;main (/a/b.py:1);LibevConnection.create_timer ({io}:260);"
        f"LibevLoop.add_timer ({io}:140) 1": "timers",
        f"thread (1): event_loop;LibevLoop._loop_will_run ({io}:221);LibevLoop._update_timer ({io}:146) 1":
            "timers",
        f"thread (2): MainThread;main (/a/b.py:1);LibevConnection.push ({io}:390) 1": "request",
        f"thread (1): event_loop;{LOOP_HEAD};Event.set ({PY}/threading.py:597) 1": "dispatch",
        f"thread (1): event_loop;LibevConnection.handle_write ({io}:320) 1": "socket",
    }
    for line, category in cases.items():
        assert categories.classify(one(line), by_module=True) == category, line


def test_a_run_that_cannot_connect_is_reported_failed(tmp_path, monkeypatch):
    from profiling.harness.runner import Harness, Options

    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    opts = Options(patterns=["sync"], factories=["tuple"], kinds=["read"], hosts=["127.0.0.1"], port=1,
                   out=str(tmp_path), profiler="none", connection_class="asyncio")
    (row,) = Harness(opts).run()
    assert "NoHostAvailable" in row["failed"] and row["ops"] == 0
    assert "FAILED" in summary.table([row])


def test_instrumented_wrappers_carry_the_markers_sampling_looks_for():
    """Both methods must draw the same boundaries: each timed wrapper's code is named by its marker."""
    from cassandra.protocol import ProtocolHandler

    rec = instrument.Recorder()
    handler = instrument.timed_handler(rec, ProtocolHandler)
    wrappers = {
        instrument.timed_bind(rec, lambda values: values): "encode",
        instrument.timed_row_factory(rec, lambda names, rows: rows): "row_factory",
        handler.encode_message.__func__: "encode",
        handler.decode_message.__func__: "deserialization",
        rec._timed_wait: "wait",
    }
    for wrapper, category in wrappers.items():
        code = wrapper.__code__
        assert code.co_filename.endswith(categories._MARKER_FILE)
        assert categories.MARKERS[code.co_qualname.rsplit(".", 1)[-1]] == category
        assert categories.MARKERS[code.co_name] == category
    assert rec.wait(lambda a, b: a + b, 2, 3) == 5
    assert rec.snapshot()["calls"]["wait"] == 1


def test_callback_chains_give_up_after_their_timeout():
    from types import SimpleNamespace

    from profiling.harness import patterns

    class Unanswered:
        def add_callbacks(self, ok, err):
            pass

    session = SimpleNamespace(execute_async=lambda statement: Unanswered())
    ctx = patterns.Context(session, lambda i: i, concurrency=2, timeout=0.05)
    with pytest.raises(TimeoutError, match="2 requests still in flight after 0.05 s"):
        patterns.callback_full_pipeline(ctx, range(5))


def test_stop_on_error_stops_issuing_requests():
    from types import SimpleNamespace

    from profiling.harness import patterns

    sent = []

    def execute_async(statement):
        sent.append(statement)
        raise ValueError("refused")

    ctx = patterns.Context(SimpleNamespace(execute_async=execute_async), lambda i: i, stop_on_error=True)
    patterns.sync(ctx, range(10))
    assert sent == [0] and ctx.tally.errors == 1 and ctx.stop.is_set()
