"""Samples inside system calls, seen from Python stacks (see :mod:`profiling.sampling.categories`).

A sample's kernel CPU is not in its stack; the call it is in is, by its native
function (with ``--native``) or by the Python source line that makes it.
"""

from __future__ import annotations

import linecache
import re

from .stacks import Frame

#: A source line that makes a system call: the reactors' socket send and recv, the release
#: of a lock another thread waits on (``Condition.notify``), a futex wake, and the regions'
#: reads of the thread's CPU clock (``clock_gettime`` of a thread clock is a system call).
_SYSCALL_LINE = re.compile(
    r"\.(send|sendall|sendmsg|sendto|recv|recv_into|recvmsg|recvfrom|release)\(|\b_clock\(\)")
#: Those calls that wake another thread or process (the server, for a socket send): a thread
#: is often preempted right there by the one it woke, and still looks busy to py-spy.
_WAKE_LINE = re.compile(r"\.(send|sendall|sendmsg|sendto|release)\(")
#: Native functions of those calls (with ``--native``).
SYSCALL_NATIVE = frozenset({
    "send", "__send", "__libc_send", "sendmsg", "__libc_sendmsg", "sendto", "__libc_sendto",
    "recv", "__recv", "__libc_recv", "recvmsg", "__libc_recvmsg", "recvfrom", "__libc_recvfrom",
    "sock_send_impl", "sock_recv_impl", "sock_sendmsg_impl", "sock_recv_into_impl",
    "futex_wake", "__lll_unlock_wake", "lll_unlock_wake", "PyThread_release_lock",
})


def in_syscall(frames: list[Frame]) -> bool:
    """Is this (busy) sample inside a system call (socket I/O, waking a thread)?

    Its CPU is kernel time, which the kernel's per-thread accounting gives
    apart (``sys_ns``); and a thread is often preempted right there (the call
    wakes the server or another thread, which takes the core), so py-spy
    keeps seeing it "running" at that line. Spreading user CPU over these samples too would
    count that time twice and shrink every other category.
    """
    return _in_call(frames, SYSCALL_NATIVE, _SYSCALL_LINE)


_WAKE_NATIVE = frozenset(f for f in SYSCALL_NATIVE if "recv" not in f)


def at_wake_site(frames: list[Frame]) -> bool:
    """Is this (busy) sample inside a system call that wakes another thread or process?"""
    return _in_call(frames, _WAKE_NATIVE, _WAKE_LINE)


def _in_call(frames: list[Frame], natives: frozenset[str], line: re.Pattern[str]) -> bool:
    """Is the sample in one of ``natives`` (native frames) or, without native frames, at a
    Python source line matching ``line``?"""
    if not frames:
        return False
    k = len(frames)
    while k and not frames[k - 1].python:
        k -= 1
        if frames[k].func in natives:
            return True
    if k < len(frames):
        return False
    last = frames[-1]
    return bool(line.search(linecache.getline(last.file, last.line)))
