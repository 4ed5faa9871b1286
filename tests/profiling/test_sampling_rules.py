"""The sampled method's rules that make it count what the instrumented clocks count: a region
wrapper's own lines, stacks py-spy cut short, every thread's kernel CPU."""

from pathlib import Path

import pytest

from profiling.sampling import categories, regionwindow
from profiling.sampling.stacks import parse_raw
from profiling.timing import instrument
from profiling.timing.instrument import CATEGORIES

INSTR = instrument.__file__
ROOT = "Thread._bootstrap (/py/threading.py:1002);Thread.run (/py/threading.py:982)"
LOOP = f"{ROOT};LibevConnection.handle_read (/x/cassandra/io/libevreactor.py:372)"


def raw(*lines):
    return list(parse_raw(lines))


def shares(**nonzero):
    return {**dict.fromkeys(CATEGORIES, 0), **nonzero}


def wrapper():
    lines = regionwindow.wrapper_lines(INSTR)
    assert lines is not None
    return lines


def test_the_wrapper_lines_are_found_in_the_instrumentation_source():
    start, first, second, end = wrapper()
    source = Path(INSTR).read_text().splitlines()
    assert source[start - 1].lstrip().startswith("def ")
    assert "_clock()" in source[first - 1] and "_clock() - t0" in source[second - 1]
    assert start < first < second <= end
    assert regionwindow.side(INSTR, first + 1, True) == regionwindow.INSIDE
    assert regionwindow.side(INSTR, start, True) == regionwindow.OUTSIDE
    assert regionwindow.side(INSTR, end, True) == regionwindow.OUTSIDE
    assert regionwindow.side(INSTR, end, False) == regionwindow.INSIDE  # a callee: the wrapped call
    assert regionwindow.side(INSTR, end + 40, True) == regionwindow.INSIDE  # not the wrapper: no evidence


def test_a_file_without_one_pair_of_readings_has_no_window(tmp_path):
    src = tmp_path / "instrument.py"
    src.write_text("def timed():\n    t0 = _clock()\n    return 1\n")
    assert regionwindow.wrapper_lines(str(src)) is None
    assert regionwindow.side(str(src), 1, True) == regionwindow.INSIDE


def test_wrapper_lines_outside_the_readings_go_to_the_enclosing_category():
    """The clocks charge a wrapper's bookkeeping before its first reading and after its second
    to the region around it (or the thread's base category); a reading is half each side."""
    start, first, second, end = wrapper()
    inside = first + 1
    s = categories.Samples.of(raw(
        f"thread (1): event_loop;{LOOP};_pf_framing ({INSTR}:{inside});_pf_dispatch ({INSTR}:{start}) 10\n",
        f"thread (1): event_loop;{LOOP};_pf_framing ({INSTR}:{inside});_pf_dispatch ({INSTR}:{end}) 6\n",
        f"thread (1): event_loop;{LOOP};_pf_framing ({INSTR}:{inside});_pf_dispatch ({INSTR}:{inside}) 20\n",
        f"thread (1): event_loop;{LOOP};_pf_framing ({INSTR}:{second}) 4\n",
        f"thread (2): MainThread;main (/a/b.py:1);_pf_request ({INSTR}:{first}) 8\n"))
    assert s.by_thread["1"] == {"framing": 16 + 2, "dispatch": 20, "socket": 2}
    assert s.by_thread["2"] == {"request": 4, "other": 4}
    # the readings are system calls: their halves are the kernel evidence of each side
    assert s.in_kernel == {"1": {"framing": 2, "socket": 2}, "2": {"request": 4, "other": 4}}
    assert s.busy == 48


def test_every_threads_kernel_cpu_goes_where_its_system_calls_are():
    """Not only the event loop's: a thread issuing requests makes its system calls in request
    (and the regions' clock readings), which the instrumented clocks count there, not in wait."""
    _, first, second, _ = wrapper()
    s = categories.Samples.of(raw(
        f"thread (2): MainThread;main (/a/b.py:1);_pf_wait ({INSTR}:{first + 1}) 10\n",
        f"thread (2): MainThread;main (/a/b.py:1);_pf_request ({INSTR}:{first + 1}) 30\n",
        f"thread (2): MainThread;main (/a/b.py:1);_pf_request ({INSTR}:{first + 1});"
        f"_pf_timer ({INSTR}:{second}) 20\n",
        "thread (2): MainThread;main (/a/b.py:1);Event.wait (/py/threading.py:629) 20\n"))
    # 80 samples over 8000 ns: 100 ns each; kernel 3000 ns: 10 readings in timers, 10 in request
    # (1000 ns each); the 1000 ns no call shows spread over the 80: 10 wait, 40 request, 10 timers,
    # 20 asleep (wait); user 1000 ns by the 40 samples outside calls: 10 wait, 30 request
    w = s.shares({"2": {"name": "MainThread", "ns": 4000, "sys_ns": 3000}}, total_ns=4000, wall_ns=8000)
    assert w == pytest.approx(shares(timers=(1000 + 125) / 4000, request=(1000 + 500 + 750) / 4000,
                                     wait=(125 + 250 + 250) / 4000))


def test_kernel_cpu_no_system_call_shows_follows_the_running_samples():
    """Page faults and interrupts taken while the thread runs code are kernel CPU at no system
    call: a loop that never sleeps spends it in its regions, not in socket."""
    inside = wrapper()[1] + 1
    s = categories.Samples.of(raw(
        f"thread (1): event_loop;{LOOP};_pf_dispatch ({INSTR}:{inside}) 30\n",
        f"thread (1): event_loop;{LOOP} 10\n"))
    w = s.shares({"1": {"name": "event_loop", "ns": 1000, "sys_ns": 400}}, total_ns=1000, wall_ns=4000)
    assert w == pytest.approx(shares(dispatch=0.75, socket=0.25))


def test_a_stack_cut_short_takes_the_categories_of_its_function_in_complete_stacks():
    """py-spy reading a running process sometimes gets a generator resumed from compiled code
    without its callers: it ran inside the regions its complete stacks show around it."""
    inside = wrapper()[1] + 1
    request = f"_pf_request ({INSTR}:{inside})"
    stacks = raw(
        f"thread (1): event_loop;{LOOP};{request};make_query_plan (/x/policies.py:381) 3\n",
        f"thread (1): event_loop;{LOOP};make_query_plan (/x/policies.py:381) 1\n",
        "thread (1): event_loop;make_query_plan (/x/policies.py:387) 8\n",
        "thread (1): event_loop;namedtuple (/py/collections/__init__.py:503) 2\n",
        f"thread (1): event_loop;{ROOT};_pf_dispatch ({INSTR}:{inside});start_next (/p/patterns.py:9);"
        f"{request} 4\n",
        f"thread (1): event_loop;start_next (/p/patterns.py:9);{request} 5\n",
        # a thread never seen whole: taken as it is
        "thread (2): worker;job (/a/b.py:1) 6\n")
    s = categories.Samples.of(stacks)
    # the query plan ran in request 3 times out of 4, on the loop itself once
    assert s.by_thread["1"]["request"] == pytest.approx(3 + 6 + 4 + 5)
    assert s.by_thread["1"]["socket"] == pytest.approx(1 + 2)
    assert s.unplaced == 2  # namedtuple: in no complete stack
    assert s.by_thread["2"] == {"other": 6}
    assert s.busy == 3 + 1 + 8 + 4 + 5 + 6


def test_a_thread_seen_only_at_wake_sites_keeps_its_kernel_cpu_home(tmp_path):
    src = tmp_path / "reactor.py"
    src.write_text("def f(self):\n    self._socket.send(m)\n")
    s = categories.Samples.of(raw(f"thread (1): event_loop;f ({src}:2) 5\n"))
    w = s.shares({"1": {"name": "event_loop", "ns": 100, "sys_ns": 40}}, total_ns=100, wall_ns=500)
    assert w == pytest.approx(shares(socket=1.0))
