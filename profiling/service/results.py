"""What ``attach`` and ``record`` share: a service's py-spy recording turned into a result
row (shares, flamegraph, speedscope), the reactor note, and the reports with advice."""

from __future__ import annotations

from typing import Any

from ..report import publish, summary
from ..report.flame import draw
from ..sampling import categories, foreign
from ..sampling.stacks import Stack, parse_raw
from ..timing.instrument import LOOP_THREAD_NAMES

#: Run-queue time over CPU time above which the sampled shares are flagged (:func:`overload_note`).
OVERLOAD_RATIO = 3.0
#: Time-slicing (:func:`overload_note`): waits that long per preemption, summing to that share of the CPU.
SLICED_WAIT_NS = 1_000_000
SLICED_RATIO = 0.25
#: The reactors whose event-loop thread the classification knows by name, fully classified.
FULL_REACTORS = {"event_loop": "libev", "asyncio_thread": "asyncio"}


class ServiceError(Exception):
    """A problem the user can fix (bad PID, no driver, no permission): exit 2 with its message."""


def base_row(kind: str, command: str) -> dict[str, Any]:
    return {"pattern": kind, "workload": "service", "factory": "?", "ops": 0, "errors": 0,
            "throughput_ops_s": 0.0, "cpu_us_per_op": None, "command": command, "warnings": [],
            "artifacts": {}, "shares": {"instrumented": None, "sampled": None}}


def add_samples(row: dict[str, Any], raw: str, out: str, name: str, threads: dict[str, dict[str, Any]],
                total_ns: float, rule: foreign.FactoryRule, rate: int, wall_ns: float) -> list[Stack]:
    """Classify the recording (by the instrumentation's markers when it has them, else by
    :mod:`profiling.sampling.foreign`), weigh it by each thread's CPU, draw it. ``wall_ns``: how long
    py-spy sampled (the event loop's kernel CPU is split by its samples in system calls, each
    standing for one sampling interval, as for the harness's runs)."""
    with open(raw) as f:
        stacks = list(parse_raw(f))
    for tid, thread_name in {s.tid: s.thread for s in stacks}.items():
        if tid in threads:  # py-spy knows Python's thread names, the kernel only the process's
            threads[tid]["name"] = thread_name
    if categories.has_markers(stacks):
        samples = categories.Samples.of(stacks)
        cpu = list(categories.cpu_stacks(stacks))
    else:
        classified = foreign.classify_all(stacks, rule)
        samples = classified.samples
        cpu = list(foreign.cpu_stacks(stacks, rule))
        if classified.factory:
            row["factory"], row["factory_ref"] = classified.factory, classified.factory_ref
    row["shares"]["sampled"] = samples.shares(threads, total_ns, wall_ns)
    row["threads"] = threads
    summary.note_samples(row, samples, rate, "a longer window or a higher --rate")
    row["samples"]["by_markers"] = not samples.by_module
    draw(row, cpu, out, name, raw, f"{row['pattern']}: {row['command']}")
    for note in (reactor_note({s.thread for s in stacks}), overload_note(threads)):
        if note:
            row["warnings"].append(note)
    row["reactor"] = next((r for t, r in FULL_REACTORS.items() if t in {s.thread for s in stacks}), None)
    return stacks


def waits(threads: dict[str, dict[str, Any]]) -> tuple[float, float, int]:
    """The threads' CPU ns, the ns they waited for a core, and how often they were preempted, summed."""
    ts = threads.values()
    return (sum(max(0, t["ns"]) for t in ts), sum(max(0, t.get("queued_ns", 0)) for t in ts),
            sum(max(0, t.get("preempted", 0)) for t in ts))


def overload_note(threads: dict[str, dict[str, Any]]) -> str | None:
    """A warning when the kernel's accounting says the sampled shares are skewed by waits for a core.

    py-spy counts a thread that waits, runnable, for a core as if it ran, where it was preempted.
    Two cases skew the shares (schedstat's run-queue time, and ``status``'s preemptions):

    - the threads waited far longer than they ran (``OVERLOAD_RATIO``);
    - they were time-sliced with other CPU-bound work: preempted for a scheduler slice at a time
      (``SLICED_WAIT_NS`` on average), for a fair share of their CPU (``SLICED_RATIO``). A
      thread woken by a socket runs at once, so its short bursts rarely wait, while code that
      runs for milliseconds waits a slice at every slice: its share is overstated.

    Measured on a shared 2-core machine with a cost planted in a row factory: waits of
    0.1-0.2 ms a preemption, even at twice the threads' CPU, gave the planted share within
    10%; waits of 2-3.6 ms, at 1.1-1.4 times their CPU, overstated it by 24-43%.
    """
    cpu, queued, preempted = waits(threads)
    if cpu <= 0:
        return None
    if queued > OVERLOAD_RATIO * cpu:
        return (f"the machine is overloaded: the threads waited {queued / 1e9:.1f} s for a core and ran only "
                f"{cpu / 1e9:.1f} s, so the sampled shares follow where they waited as much as where they ran; "
                "rely on the instrumented shares (record) or profile on a quieter machine")
    if preempted and queued > SLICED_RATIO * cpu and queued > SLICED_WAIT_NS * preempted:
        return (f"the machine is overloaded: the threads were time-sliced with other CPU-bound work (waited "
                f"{queued / 1e9:.1f} s for a core, {queued / max(1, preempted) / 1e6:.1f} ms a preemption, and "
                f"ran {cpu / 1e9:.1f} s), so the sampled shares overstate code that runs for milliseconds at a "
                "time; rely on the instrumented shares (record) or profile on a quieter machine")
    return None


def reactor_note(thread_names: set[str]) -> str | None:
    """Why the classification is partial, when the driver's event loop is not libev's or asyncio's."""
    if thread_names & set(FULL_REACTORS):
        return None
    other = thread_names & LOOP_THREAD_NAMES
    if other:
        return (f"reactor thread {', '.join(sorted(other))}: known by name as the driver's event loop, so its CPU "
                "counts as socket, but its frames are not mapped to framing, dispatch or timers (libev's and "
                "asyncio's are)")
    return ("no driver event-loop thread seen (gevent, eventlet or a reactor of your own, or an idle driver): "
            "the reactor's work counts as other, not socket; libev and asyncio are classified fully")


def write_reports(rows: list[dict[str, Any]], out: str, meta: dict[str, Any]) -> None:
    publish.publish(rows, out, meta)
