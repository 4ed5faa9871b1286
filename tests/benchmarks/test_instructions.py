"""Instructions per query: the difference of two callgrind runs over the difference in queries."""

import pytest

from benchmarks import instructions
from benchmarks.harness import callgrind, syscalls


def test_per_query_is_the_difference_of_two_runs():
    # start-up (1,000,000) cancels out; 5,000 instructions per query remain, whichever run comes first
    assert callgrind.per_query({40: 1_200_000, 120: 1_600_000}) == 5_000
    assert callgrind.per_query({120: 1_600_000, 40: 1_200_000}) == 5_000


def test_the_total_is_read_from_callgrind_output():
    text = "events: Ir\nsummary: 123456\nfn=main\n0 5\ntotals: 123456\n"
    assert callgrind._TOTALS.search(text).group(1) == "123456"


def test_two_different_lengths_are_needed():
    with pytest.raises(SystemExit, match="two different run lengths"):
        instructions.main(["--queries", "40,40"])


def test_asyncio_configurations_are_checked_before_anything_runs():
    with pytest.raises(SystemExit, match="not asyncio configurations: tuple"):
        instructions.main(["--asyncio", "--factories", "everything_on+await,tuple", "--queries", "40,120"])


# System calls per query (strace) ---------------------------------------------------------------------

STRACE_SUMMARY = """syscall            calls    errors
---------------- --------- ---------
futex                  412        37
sendto                  51
epoll_wait              90
read                   128         2
---------------- --------- ---------
total                  681        39
"""


def test_the_counts_are_read_from_the_strace_summary():
    assert syscalls.parse(STRACE_SUMMARY) == {"futex": 412, "sendto": 51, "epoll_wait": 90, "read": 128}


def test_system_calls_per_query_are_the_difference_of_two_runs():
    runs = {120: {"sendto": 170, "futex": 50, "brk": 9}, 40: {"sendto": 90, "futex": 50, "openat": 3}}
    assert syscalls.per_query(runs) == {"brk": 9 / 80, "futex": 0.0, "openat": -3 / 80, "sendto": 1.0}


def test_a_traced_run_counts_each_call_of_every_thread():
    """A real strace run: a thread that makes one getppid call per unit of work, start-up cancelled out."""
    body = ("import os, sys, threading; n = int(sys.argv[1]); "
            "t = threading.Thread(target=lambda: [os.getppid() for _ in range(n)]); t.start(); t.join()")
    runs = {n: syscalls.counts(["-c", body, str(n)], f"{n} calls") for n in (10, 110)}
    assert syscalls.per_query(runs)["getppid"] == 1.0


def test_a_failing_traced_run_says_so():
    with pytest.raises(RuntimeError, match="strace run failed"):
        syscalls.counts(["-c", "raise SystemExit(3)"])
