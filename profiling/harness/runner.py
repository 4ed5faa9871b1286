"""The harness: for each workload x pattern x factory, one child process, measured.

Each run's child (:mod:`profiling.harness.child`) connects and warms up; then py-spy
attaches to it (after the setup, so only the measured part is sampled), the
pattern runs, py-spy stops, and, if asked, the pattern runs again under
cProfile. The harness writes each run's artifacts and, after every run,
``summary.json`` again, so an interrupted session leaves what it has.

:mod:`profiling.harness.session` puts a session around the runs: the cluster, its data, the reports and the
exit code.

Ctrl-C (SIGINT) or SIGTERM: the first one stops the current run early (its partial result is
kept and marked ``interrupted``, with the reason) and skips the rest; the second one kills the
run's processes. Either way the reports are written; the exit code is 130 (SIGINT) or 143 (SIGTERM).

A node that dies: the run's child gives up on requests that keep failing (:mod:`profiling.harness.watchdog`)
and reports what it measured, marked interrupted with the reason; if no contact point answers any
more, the remaining runs are skipped, the reports say so and the exit code is 3. Every run's
processes (the child, its pool workers, py-spy) are ended by process group.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from .. import factories as registry
from ..cluster import Contact
from ..node import protocol
from ..report import summary
from ..report.flame import draw
from ..sampling import categories, pyspy
from ..sampling.stacks import parse_raw
from ..timing import instrument
from . import repeats, warmup
from .child import PREFIX
from .patterns import PATTERNS
from .processes import kill_group, reader, wait_exited
from .progress import Progress
from .spec import Measurement, RunSettings, RunSpec
from .workload import Workload


#: py-spy --subprocesses finds a pool's workers a moment after it starts sampling.
SUBPROCESS_DISCOVERY_S = 1.0
#: How long a run's process may take to exit once told to; then its process group is killed.
CHILD_EXIT_S = 30.0
#: After a run whose requests failed: handshakes with every contact point, this many times a second
#: apart, each given this long (a busy node may be slow to answer; a dead one refuses at once).
CHECK_ATTEMPTS, CHECK_TIMEOUT_S = 3, 3.0
#: The exit code of a session that lost its cluster (as ``python -m profiling.node status``'s "not up").
EXIT_CLUSTER_GONE = 3
SIGNALS: dict[int, str] = {signal.SIGINT: "SIGINT (Ctrl-C)", signal.SIGTERM: "SIGTERM"}


@dataclass(kw_only=True)
class Options(RunSettings):
    """A profiling session: which runs, the workload's shape, the profilers and the output;
    every run is made with the settings this extends."""

    patterns: list[str]
    factories: list[str]
    kinds: list[str]  # "read", "write"
    num_columns: int = 5
    column_type: str = "text"
    rows_per_query: int = 10
    keyspace: str = "pyfactories_profile"
    statement: str = "prepared"  # prepared statements with bound values, or simple ones with literals
    keep_data: bool = False
    profiler: str = "both"  # none, cprofile, pyspy, both
    out: str = "profiles"
    rate: int = 500
    native: bool = False
    cprofile_ops: int | None = None  # default: a quarter of num_ops
    timeout: float = 600.0  # per phase of a run
    command: str = ""
    repeat: int = 1  # runs of each combination, round-robin
    warmup_s: float = 5.0  # the node warm-up per workload: at least this long, until steady ...
    warmup_max_s: float = 30.0  # ... or this long
    recheck_first: bool = False  # run the first combination again at the end (the warm-up check)

    @property
    def pyspy(self) -> bool:
        return self.profiler in ("pyspy", "both")

    @property
    def cprofile(self) -> bool:
        return self.profiler in ("cprofile", "both")

    def workload(self, kind: str) -> Workload:
        return Workload(kind, self.num_columns, self.column_type, self.rows_per_query, self.keyspace,
                        self.statement)

    def spec(self, kind: str, pattern: str, factory: str) -> RunSpec:
        """The run of one combination, with every other field as these options say."""
        return RunSpec(pattern=pattern, factory=factory, workload=self.workload(kind), **self.settings())

    def combos(self) -> list[tuple[str, str, str]]:
        """(kind, pattern, factory), the configurations of a pattern next to each other."""
        out = []
        for kind in self.kinds:
            factories = self.factories if kind == "read" else for_writes(self.factories)
            out += [(kind, p, f) for p in self.patterns for f in factories]
        return out

    def plan(self) -> list[tuple[int | str, tuple[str, str, str]]]:
        """Every run of the session, in order: the repeats round-robin, then the warm-up check."""
        order: list[tuple[int | str, tuple[str, str, str]]] = list(repeats.plan(self.combos(), self.repeat))
        if self.recheck_first and order:
            order.append((repeats.CHECK, order[0][1]))
        return order


#: The driver's factories writes run, when they are among a session's: an INSERT returns no rows, so
#: the two do the same work, and the gap between them is the noise of the measurement.
WRITE_FACTORIES = ("named_tuple", "tuple")


def for_writes(factories: list[str]) -> list[str]:
    """The configurations writes run: the driver's :data:`WRITE_FACTORIES` and the whole-client
    configurations (``everything_on``: its binding, futures and connection class act on writes too)
    among ``factories``, else the first one (a row factory alone changes nothing in a write)."""
    chosen = [f for f in factories if f in WRITE_FACTORIES or registry.resolve(f).whole_client]
    return chosen or factories[:1]


class ChildEnded(Exception):
    pass


class Harness:
    def __init__(self, opts: Options) -> None:
        self.opts = opts
        self.rows: list[dict[str, Any]] = []  # one per combination (``repeats.combine`` of the runs)
        self.runs: list[dict[str, Any]] = []  # every run, repeats apart
        self.warmups: dict[str, dict[str, Any]] = {}  # workload kind -> the node warm-up before it
        self.stopping = False
        self.stop_reason: str | None = None
        self.exit_code: int | None = None
        self._child: subprocess.Popen[str] | None = None
        self._spy: pyspy.PySpy | None = None

    # -- Ctrl-C, SIGTERM, a cluster that is gone -------------------------------------------------

    def _on_signal(self, signum: int, _frame: Any) -> None:
        if self.stopping and self.exit_code in (130, 143):  # the second signal
            self._kill()
            raise KeyboardInterrupt
        self._stop(SIGNALS.get(signum, f"signal {signum}"), 128 + signum)
        print(f"\n[profiling] {self.stop_reason}: finishing the current run early, then writing the reports "
              "(Ctrl-C again to abort it)", flush=True)
        if self._child and wait_exited(self._child, 0) is None:
            self._child.send_signal(signal.SIGINT)

    def _stop(self, reason: str, exit_code: int) -> None:
        """No further runs, for ``reason`` (the first reason stays)."""
        if not self.stopping:
            self.stopping, self.stop_reason, self.exit_code = True, reason, exit_code

    def _kill(self) -> None:
        if self._spy:
            self._spy.kill()
        if self._child:
            kill_group(self._child)

    def _check_cluster(self, row: dict[str, Any]) -> None:
        """After a run with failed requests: stop the session if no contact point answers."""
        if not (row.get("failed") or row.get("interrupted_reason") or row.get("errors")) or self.stopping:
            return
        contact = self.opts.contact()
        if not _answers(contact):
            self._stop(f"the cluster stopped answering ({contact}) during {row['workload']} {row['pattern']} "
                       f"{row['factory']}", EXIT_CLUSTER_GONE)
            print(f"[profiling] {self.stop_reason}: skipping the remaining runs", flush=True)

    # -- the session -------------------------------------------------------------------------

    def run(self) -> list[dict[str, Any]]:
        os.makedirs(self.opts.out, exist_ok=True)
        previous = {sig: signal.signal(sig, self._on_signal) for sig in SIGNALS}
        try:
            order = self.opts.plan()
            progress = Progress(len(order), len({combo[0] for _, combo in order}) if self.opts.warmup_s > 0 else 0)
            print(f"[profiling] {len(order)} runs of {self.opts.num_ops} queries (Ctrl-C stops the current run early "
                  "and keeps what it measured)", flush=True)
            for n, (repeat, (kind, pattern, factory)) in enumerate(order, 1):
                if self.stopping:
                    break
                if kind not in self.warmups:  # the node, once per workload, before its first run
                    self.warmups[kind] = warmup.session_warm_up(self.opts, kind, lambda: self.stopping)
                    progress.warmed(self.warmups[kind].get("seconds", 0.0))
                    if self.stopping:  # Ctrl-C during the warm-up
                        break
                label = "" if self.opts.repeat == 1 and repeat == 1 else (
                    " (warm-up check: the first run again)" if repeat == repeats.CHECK
                    else f" (round {repeat}/{self.opts.repeat})")
                try:
                    row = self.run_one(kind, pattern, factory, repeat)
                except KeyboardInterrupt:
                    break
                row["repeat"] = repeat
                self.runs.append(row)
                print(progress.ran(n, f"{kind} {pattern} {factory}{label}", row), flush=True)
                self.rows = repeats.combine(self.runs)
                for r in self.rows:
                    if r["workload"] in self.warmups:
                        r["node_warmup"] = self.warmups[r["workload"]]
                summary.write_json(self.rows, self.opts.out)
                self._check_cluster(row)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self._kill()
        return self.rows

    def run_one(self, kind: str, pattern: str, factory: str, repeat: int | str = 1) -> dict[str, Any]:
        o = self.opts
        name = _slug(f"{kind}-{pattern}-{factory}" + ("" if o.repeat == 1 and repeat == 1 else f"-r{repeat}"))
        spec = o.spec(kind, pattern, factory)
        row: dict[str, Any] = {**spec.record(), "warnings": [], "artifacts": {}}
        if PATTERNS[pattern].warning:
            row["warnings"].append(PATTERNS[pattern].warning)
            print(f"  warning: {PATTERNS[pattern].warning}", flush=True)
        child = self._child = subprocess.Popen(
            [sys.executable, "-m", "profiling.harness.child"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, start_new_session=True, cwd=os.getcwd())
        lines = reader(child)
        result: dict[str, Any] | None = None
        try:
            self._send(spec.to_json())
            kind_, msg = self._expect(lines, ("ready", "failed"), o.timeout)
            if kind_ == "failed":
                return _failed(row, msg["error"])
            row["pyfactories"] = msg.get("pyfactories")  # the parts on in the measured client
            if (row["pyfactories"] or {}).get("connection"):
                row["connection"] = "pyfactories"
            raw = os.path.join(o.out, f"{name}.raw.txt")
            spy_problem = self._start_spy(child.pid, raw, spec.multiprocess) if o.pyspy else None
            self._send("go")
            print(f"  measuring (pid {child.pid}; Ctrl-C stops it early and keeps what it measured)", flush=True)
            _kind, result = self._expect(lines, ("done",), o.timeout)
            if self._spy:
                spy_problem = self._spy.stop()
                self._spy = None
            if o.cprofile and not self.stopping and repeat == 1 and not result["interrupted"]:  # once per combination
                prof = os.path.join(o.out, f"{name}.prof")
                self._send(f"cprofile {o.cprofile_ops or max(1, o.num_ops // 4)} {os.path.abspath(prof)}")
                kind_, profiled = self._expect(lines, ("profiled", "failed"), o.timeout)
                if kind_ == "failed":
                    row["warnings"].append(f"no cProfile file: {profiled['error']}")
                else:
                    row["artifacts"]["prof"] = os.path.basename(prof)
                    row["cprofile_ops"] = profiled["ops"]
            else:
                self._send("exit")
            wait_exited(child, CHILD_EXIT_S)
        except (ChildEnded, TimeoutError, subprocess.TimeoutExpired, BrokenPipeError) as exc:
            if result is None:
                return _failed(row, f"{type(exc).__name__}: {exc}")
            row["warnings"].append(f"after its measurement, the run's process: {type(exc).__name__}: {exc}")
        finally:
            self._kill()  # the child's process group: its pool workers too
            self._spy = None
            child.wait()
            for pipe in (child.stdin, child.stdout):
                if pipe:
                    try:
                        pipe.close()
                    except BrokenPipeError:
                        pass
            self._child = None
        measured = Measurement(**result)
        _fill(row, measured)
        if PATTERNS[pattern].warning:
            row["warnings"][0] += f" (this run: max RSS {measured.max_rss_mb:.0f} MB)"
        if measured.interrupted:
            row["interrupted_reason"] = measured.interrupted_reason or self.stop_reason or "stopped early"
            row["warnings"].append(f"interrupted: {row['interrupted_reason']}")
        if o.pyspy:
            self._add_samples(row, raw, name, spy_problem)
        return row

    def _start_spy(self, pid: int, raw: str, multiprocess: bool) -> str | None:
        o = self.opts
        try:
            self._spy = pyspy.PySpy(pid, raw, rate=o.rate, native=o.native, subprocesses=multiprocess,
                                       nonblocking=not o.native)
            self._spy.wait_sampling()
            if multiprocess:
                time.sleep(SUBPROCESS_DISCOVERY_S)
        except RuntimeError as exc:
            self._spy = None
            print(f"  py-spy: {exc}; continuing without sampling", flush=True)
            return str(exc)
        return None

    def _add_samples(self, row: dict[str, Any], raw: str, name: str, problem: str | None) -> None:
        if problem or not os.path.exists(raw):
            row["warnings"].append(f"no py-spy samples: {problem}")
            row["shares"]["sampled"] = None
            return
        with open(raw) as f:
            stacks = list(parse_raw(f))
        samples = categories.Samples.of(stacks)
        inst = row["instrumented_ns"]
        if row["instrumentation"] == "on":  # the samples are classified by the regions' frames
            row["shares"]["sampled"] = samples.shares(inst["threads"], inst["process_ns"], row["wall_s"] * 1e9)
        summary.note_samples(row, samples, self.opts.rate, "raise -n or --rate")
        draw(row, list(categories.cpu_stacks(stacks)), self.opts.out, name, raw,
             f"{row['workload']} {row['pattern']} {row['factory']}")

    # -- talking to the child ----------------------------------------------------------------

    def _send(self, line: str) -> None:
        assert self._child is not None and self._child.stdin is not None
        self._child.stdin.write(line + "\n")
        self._child.stdin.flush()

    def _expect(self, lines: queue.Queue[str | None], kinds: tuple[str, ...], timeout: float
                ) -> tuple[str, dict[str, Any]]:
        """The child's next message of one of ``kinds``; its other output is passed through."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {'/'.join(kinds)} from the run within {timeout:.0f} s")
            try:
                line = lines.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            if line is None:
                code = wait_exited(self._child, CHILD_EXIT_S) if self._child else None
                raise ChildEnded(f"the run's process ended (exit code {code}) before saying {'/'.join(kinds)}")
            if line.startswith(PREFIX):
                kind, _, payload = line[len(PREFIX):].partition(" ")
                if kind in kinds:
                    return kind, json.loads(payload)
            else:
                print(f"  | {line}", flush=True)


def _answers(contact: Contact) -> bool:
    """Does any contact point answer a CQL handshake (in one of ``CHECK_ATTEMPTS`` tries)?"""
    for attempt in range(CHECK_ATTEMPTS):
        if attempt:
            time.sleep(1.0)
        if any(protocol.answers(host, contact.port, timeout=CHECK_TIMEOUT_S) for host in contact.hosts):
            return True
    return False


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def _failed(row: dict[str, Any], error: str) -> dict[str, Any]:
    """The row of a run that measured nothing (``Harness.run`` prints it, once, as every run's line)."""
    row.update(ops=0, errors=0, failed=error, wall_s=0.0, client_cpu_s=0.0,
               shares={"instrumented": None, "sampled": None})
    return row


def _fill(row: dict[str, Any], measured: Measurement) -> None:
    row.update(measured.record())
    row["shares"] = {"instrumented": instrument.shares(measured.instrumented) if row["instrumentation"] == "on"
                     else None, "sampled": None}
    row["method"] = dict(summary.METHODS)
    if measured.errors:
        row["warnings"].append(f"{measured.errors} errors: {measured.error_kinds}; "
                               f"first: {measured.first_error}")
