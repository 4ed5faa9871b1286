"""Sampling: the stacks py-spy recorded (:mod:`profiling.sampling.pyspy`, read by
:mod:`profiling.sampling.stacks`), classified into categories.

py-spy writes raw collapsed stacks (``--format raw``, one line per distinct
stack: ``frame;frame;...;leaf count``), with a ``thread (tid): name`` frame
(``--threads``) and, with ``--subprocesses``, ``process pid:"cmdline"`` frames
in front. A sample is classified by the innermost frame that is one of the
instrumentation's region markers (see :mod:`profiling.timing.instrument` and
:mod:`profiling.timing.hooks`); a sample with none belongs to ``socket`` if its
thread is a driver event-loop thread and to ``other`` otherwise. These are the
same boundaries the instrumented method uses, measured independently (counts
of stack samples instead of clocks). Why markers rather than module names: the
driver's modules are compiled (no Python frames) and its wheel is stripped (no
symbols with ``--native``), and one compiled module both encodes and decodes.
A recording without markers (py-spy run on any client) is classified by
module and function instead, more coarsely.

Samples are wall-clock snapshots, not CPU: py-spy's idle detection misses
blocked threads (always with ``--native``, whose unwinding pauses the
process) and a runnable thread waiting for a core looks busy. So samples of a
thread blocked in a lock, a condition, ``select``/``epoll`` or a sleep are
dropped here, and the shares weigh each thread by the CPU the kernel says it
used (:meth:`Samples.shares`); samples inside a system call stand for the
thread's kernel CPU, accounted apart (:func:`in_syscall`), except at wake
sites (:func:`at_wake_site`), where a thread is preempted by the one it woke.
Two more rules make a sample count where the clocks count: a region wrapper's
own lines outside its clock readings belong to the enclosing category
(:mod:`profiling.sampling.regionwindow`), and a stack py-spy cut short takes the
categories its function has in the thread's complete stacks
(:mod:`profiling.sampling.truncated`). What remains is a bias on a heavily contended machine: a thread that waits for
a core several times longer than it runs is seen mostly where the scheduler
stopped it, which is not uniform (after waking another thread, at the next
system call), so the shares of the event loop's regions drift by several
points. The harness runs py-spy ``--nonblocking`` without ``--native`` by
default: pausing the client for native unwinding halves its throughput on a
small machine.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from ..timing.instrument import CATEGORIES, LOOP_THREAD_NAMES, MARKERS
from . import regionwindow
from .bymodule import by_module as _by_module
from .stacks import Frame, Stack, parse_frame
from .syscalls import at_wake_site, in_syscall
from .truncated import Completion

_MARKER_FILE = "instrument.py"

#: Native functions in which a thread sleeps (the sample is not CPU).
IDLE_NATIVE = frozenset({
    "take_gil", "PyThread_acquire_lock_timed", "PyCOND_TIMEDWAIT", "PyMUTEX_LOCK",
    "pthread_cond_wait", "pthread_cond_timedwait", "pthread_cond_clockwait", "__pthread_cond_wait",
    "sem_wait", "sem_timedwait", "sem_clockwait", "__new_sem_wait_slow", "do_futex_wait",
    "__futex_abstimed_wait_common", "futex_wait", "epoll_wait", "epoll_pwait", "select", "__select",
    "pselect", "poll", "__poll", "ppoll", "clock_nanosleep", "__clock_nanosleep", "nanosleep",
    "time_sleep", "pysleep", "waitpid", "wait4", "accept", "accept4", "lock_PyThread_acquire_lock",
    "rlock_acquire", "acquire_timed", "_PyMutex_LockTimed", "_PySemaphore_Wait", "_PyParkingLot_Park",
})
#: Without native frames: innermost Python functions (file suffix, name's last dotted part)
#: that block in C code below them (the reactors' loops sit in select/epoll there; the
#: driver's compiled threads sleep right under Thread._bootstrap_inner).
IDLE_PYTHON = frozenset({
    ("threading.py", "wait"), ("threading.py", "_wait_for_tstate_lock"), ("threading.py", "join"),
    ("threading.py", "_bootstrap_inner"), ("futures/thread.py", "_worker"), ("queue.py", "get"),
    ("selectors.py", "select"), ("libevreactor.py", "_run_loop"), ("epollreactor.py", "doPoll"),
    ("pollreactor.py", "doPoll"), ("selectreactor.py", "doSelect"),
    ("connection.py", "_recv"), ("connection.py", "_poll"), ("connection.py", "wait"),
    ("pool.py", "_handle_workers"),
    # uvloop's loop runs in C under asyncio's Runner (``asyncio.run``, ``uvloop.run``, uvicorn): with no
    # Python frame above it, the loop waits in epoll (its own C work, unseen, is spread over the
    # thread's other samples by its CPU); the standard loop waits in ``selectors.py`` instead
    ("asyncio/runners.py", "run"),
})

def is_idle(frames: list[Frame]) -> bool:
    """Does this stack show a thread blocked (sleeping), rather than running?

    With native frames (``--native``) the blocking C function is in the stack;
    without, the innermost Python frame tells.
    """
    if not frames:
        return True  # py-spy could not read the stack: no evidence of CPU use
    if not frames[-1].python:
        k = len(frames)
        while k and not frames[k - 1].python:
            k -= 1
            if frames[k].func in IDLE_NATIVE:
                return True
        return False
    last = frames[-1]
    return any(last.file.endswith(suffix) and last.short == name for suffix, name in IDLE_PYTHON)


def _marker(frame: Frame) -> str | None:
    if frame.python and frame.file.endswith(_MARKER_FILE):
        return MARKERS.get(frame.short)
    return None


def classify(stack: Stack, by_module: bool = False) -> str | None:
    """Category of a sample, or None for an idle one.

    By the innermost region marker (the harness's recordings) or, with
    ``by_module``, the innermost frame of a known module/function; else the
    thread's base category.
    """
    frames = [parse_frame(f) for f in stack.frames]
    if is_idle(frames):
        return None
    rule = _by_module if by_module else _marker
    for frame in reversed(frames):
        category = rule(frame)
        if category:
            return category
    return base_category(stack.thread)


def attribute(stack: Stack, by_module: bool = False) -> list[tuple[str, float]] | None:
    """A sample's categories with their weights (summing to 1), or None for an idle one.

    As :func:`classify`, except where the innermost marker frame stands outside its
    region's clock readings or on one of them (:mod:`profiling.sampling.regionwindow`): that
    sample belongs to the enclosing category, wholly or by half.
    """
    category = classify(stack, by_module)
    if category is None or by_module:
        return None if category is None else [(category, 1.0)]
    frames = [parse_frame(f) for f in stack.frames]
    marked = [k for k, frame in enumerate(frames) if _marker(frame)]
    if not marked:
        return [(category, 1.0)]
    inner = frames[marked[-1]]
    outer = _marker(frames[marked[-2]]) if len(marked) > 1 else None
    where = regionwindow.side(inner.file, inner.line, marked[-1] == len(frames) - 1)
    enclosing = outer or base_category(stack.thread)
    if where == regionwindow.OUTSIDE:
        return [(enclosing, 1.0)]
    if where == regionwindow.READING:
        return [(category, 0.5), (enclosing, 0.5)]
    return [(category, 1.0)]


def has_markers(stacks: Iterable[Stack]) -> bool:
    return any(_marker(parse_frame(f)) for s in stacks for f in s.frames)


def frame_categories(stack: Stack, by_module: bool = False) -> list[str]:
    """The category of each frame's path: the thread's until a marker, then the marker's."""
    rule = _by_module if by_module else _marker
    current = base_category(stack.thread)
    out = []
    for text in stack.frames:
        current = rule(parse_frame(text)) or current
        out.append(current)
    return out


def base_category(thread_name: str) -> str:
    """A thread's category outside every region: the event loop's own work, or other."""
    return "socket" if thread_name in LOOP_THREAD_NAMES else "other"


@dataclass
class Samples:
    """Classified samples: per thread id, the count of busy samples per category."""

    by_thread: dict[str, collections.Counter[str]]
    names: dict[str, str]
    idle: int = 0
    by_module: bool = False
    #: per thread id, the busy samples inside a socket system call (see :func:`in_syscall`),
    #: per category; they are counted in ``by_thread`` too
    in_kernel: dict[str, collections.Counter[str]] = field(
        default_factory=lambda: collections.defaultdict(collections.Counter))
    #: the part of ``in_kernel`` at a call that wakes another thread (see :func:`at_wake_site`)
    at_wake: dict[str, collections.Counter[str]] = field(
        default_factory=lambda: collections.defaultdict(collections.Counter))
    #: busy samples cut short (see :mod:`profiling.sampling.truncated`) that no complete stack places
    unplaced: int = 0
    #: per thread id, every sample py-spy took of it, idle ones included
    seen: collections.Counter[str] = field(default_factory=collections.Counter)

    @classmethod
    def of(cls, stacks: list[Stack], rule: Callable[[Stack], str | None] | None = None) -> "Samples":
        """Classified by markers, or by module if the recording has none, or by ``rule``
        (a stack's category, None for an idle one) when given."""
        by_module = rule is not None or not has_markers(stacks)
        out = cls(collections.defaultdict(collections.Counter), {}, by_module=by_module)
        completion = None if by_module else Completion(stacks, parse_frame, frame_categories)
        for stack in stacks:
            out.seen[stack.tid] += stack.count
            category = rule(stack) if rule else None
            parts = [(category, 1.0)] if category else None if rule else attribute(stack, by_module)
            if parts is None:
                out.idle += stack.count
                continue
            out.names[stack.tid] = stack.thread
            frames = [parse_frame(f) for f in stack.frames]
            if completion and completion.truncated(stack, frames) and not any(map(_marker, frames)):
                parts = completion.categories(stack, frames)
                if parts is None:  # nothing tells where it ran: left out
                    out.unplaced += stack.count
                    continue
            kernel, wake = in_syscall(frames), at_wake_site(frames)
            for category, weight in parts:
                n = stack.count * weight
                _add(out.by_thread[stack.tid], category, n)
                if kernel:
                    _add(out.in_kernel[stack.tid], category, n)
                    if wake:
                        _add(out.at_wake[stack.tid], category, n)
        return out

    @property
    def busy(self) -> int:
        return round(sum(sum(c.values()) for c in self.by_thread.values()))

    def counts(self) -> dict[str, int]:
        total: collections.Counter[str] = collections.Counter(dict.fromkeys(CATEGORIES, 0))
        for c in self.by_thread.values():
            total.update(c)
        return dict(total)

    def shares(self, threads: dict[str, dict] | None = None, total_ns: float | None = None,
               wall_ns: float | None = None) -> dict[str, float]:
        """Fractions of CPU per category.

        Without ``threads``: fractions of the busy samples. With ``threads``
        (tid -> {"name", "ns", "sys_ns"}: each thread's CPU over the run and
        its kernel part, from the kernel's accounting) each thread's user CPU
        is split by the categories of its own samples, so a thread that py-spy
        saw runnable but not running does not weigh more than the CPU it
        used. Its kernel CPU, which Python stacks cannot show, is split by
        :meth:`_kernel_split` (``wall_ns``: how long py-spy sampled); samples
        inside a system call stand for that kernel CPU, so they do not share the
        user CPU. CPU of threads that ended before the run did
        (``total_ns`` minus the threads listed) is split by the samples of the
        threads not listed.
        """
        if threads is None:
            return _normalized({k: float(v) for k, v in self.counts().items()})
        ns: dict[str, float] = dict.fromkeys(CATEGORIES, 0.0)
        known = 0.0
        for tid, t in threads.items():
            cpu = max(0.0, float(t["ns"]))
            known += cpu
            kernel = min(cpu, max(0.0, float(t.get("sys_ns", 0))))
            for k, v in self._kernel_split(tid, t["name"], kernel, wall_ns).items():
                ns[k] += v
            _spread(ns, cpu - kernel, self._user_counts(tid), base_category(t["name"]))
        rest: collections.Counter[str] = collections.Counter()
        for tid, c in self.by_thread.items():
            if tid not in threads:
                rest.update(c)
        if total_ns is not None:
            _spread(ns, max(0.0, total_ns - known), rest, "other")
        return _normalized(ns)

    def _user_counts(self, tid: str) -> collections.Counter[str] | None:
        """The thread's samples that stand for user CPU."""
        counts = self.by_thread.get(tid)
        kernel = self.in_kernel.get(tid)
        return counts - kernel if counts and kernel else counts

    def _kernel_split(self, tid: str, thread_name: str, kernel: float, wall_ns: float | None
                      ) -> dict[str, float]:
        """A thread's kernel CPU (ns) by category.

        Its samples inside system calls tell where (the instrumented regions' clocks count
        the kernel time of the calls made in them: reading the thread clock, waking the
        loop from a request or a timer, receives in socket), each standing for one sampling
        interval (``wall_ns`` over the thread's samples), at most the thread's kernel CPU.
        This holds on every thread: a thread that issues requests makes system calls in
        ``request``, ``timers`` and the regions' clock readings, not only in ``wait``.
        Samples at wake sites (:func:`at_wake_site`) do not count: a thread is preempted
        there by the one it woke, for far longer than the call lasts.

        The rest is kernel CPU at no visible system call: page faults and interrupts taken
        while the thread runs code (the clocks count them in the region they interrupt),
        and the way into and out of its sleeps (epoll, futex waits). Nothing shows which,
        so it is spread evenly over the samples py-spy took of the thread while it was
        active: by the categories of its busy samples, and to :func:`_kernel_category`
        for those at a line where it sleeps. Without ``wall_ns`` the kernel CPU is split
        in the proportions of the samples in system calls.
        """
        home = _kernel_category(thread_name)
        wake = self.at_wake.get(tid, collections.Counter())
        counts = self.in_kernel.get(tid, collections.Counter()) - wake
        if not wall_ns or not self.seen.get(tid):
            total = sum(counts.values())
            return {k: kernel * v / total for k, v in counts.items()} if total else {home: kernel}
        interval = wall_ns / self.seen[tid]
        evidenced = sum(counts.values()) * interval
        scale = min(1.0, kernel / evidenced) if evidenced else 0.0
        out = {k: v * interval * scale for k, v in counts.items()}
        rest = kernel - evidenced * scale
        running = self.by_thread.get(tid, collections.Counter()) - wake
        active = self.seen[tid] - sum(wake.values())
        if active <= 0:  # every sample at a wake site: none shows where the thread ran
            out[home] = out.get(home, 0.0) + rest
            return out
        asleep = max(0.0, active - sum(running.values()))
        for k, v in [*running.items(), (home, asleep)]:
            out[k] = out.get(k, 0.0) + rest * v / active
        return out


def _add(counts: collections.Counter[str], category: str, n: float) -> None:
    """Count ``n`` samples, a fraction when a sample is shared between categories."""
    counts[category] += n  # type: ignore[assignment]


def _kernel_category(thread_name: str) -> str:
    """Where a thread's kernel CPU goes when its samples do not tell: Python stacks cannot
    show it. On the event loop it is socket calls and epoll; elsewhere mostly blocking and
    waking (futexes of waits, locks and GIL handoffs)."""
    return "socket" if thread_name in LOOP_THREAD_NAMES else "wait"


def _spread(ns: dict[str, float], cpu: float, counts: collections.Counter[str] | None,
            fallback: str) -> None:
    total = sum(counts.values()) if counts else 0
    if not total:
        ns[fallback] += cpu
        return
    for k, v in counts.items():  # type: ignore[union-attr]
        ns[k] += cpu * v / total


def _normalized(ns: dict[str, float]) -> dict[str, float]:
    whole = sum(ns.values())
    return {k: (ns[k] / whole if whole else 0.0) for k in CATEGORIES}


def cpu_stacks(stacks: list[Stack]) -> Iterator[tuple[list[str], int, list[str]]]:
    """The non-idle samples as (frames, count, category of each frame), each stack
    preceded by its process (with ``--subprocesses``) and thread frames."""
    by_module = not has_markers(stacks)
    for stack in stacks:
        if classify(stack, by_module) is None:
            continue
        process = [stack.process] if stack.process else []
        frames = process + [f"thread: {stack.thread or '?'}"] + stack.frames
        cats = ["other"] * len(process) + [base_category(stack.thread)] + frame_categories(stack, by_module)
        yield frames, stack.count, cats
