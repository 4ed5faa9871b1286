"""The harness: for each workload x pattern x factory, one child process, measured.

Each run's child (:mod:`profiling.child`) connects and warms up; then py-spy
attaches to it (after the setup, so only the measured part is sampled), the
pattern runs, py-spy stops, and, if asked, the pattern runs again under
cProfile. The harness writes each run's artifacts and, after every run,
``summary.json`` again, so an interrupted session leaves what it has.

Ctrl-C: the first one stops the current run early (its partial result is
kept and marked ``interrupted``) and skips the rest; the second one kills the
run's processes. Either way the reports are written.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from . import advice, instrument, pyspy, report, repeats, sampling, warmup
from .child import PREFIX
from .cluster import connect, reach
from .flame import write_speedscope, write_svg
from .patterns import PATTERNS
from .spec import Measurement, RunSettings, RunSpec
from .workload import Workload


#: py-spy --subprocesses finds a pool's workers a moment after it starts sampling.
SUBPROCESS_DISCOVERY_S = 1.0


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
        """(kind, pattern, factory); an INSERT returns no rows, so writes use the first factory."""
        out = []
        for kind in self.kinds:
            factories = self.factories if kind == "read" else self.factories[:1]
            out += [(kind, p, f) for p in self.patterns for f in factories]
        return out


class ChildEnded(Exception):
    pass


class Harness:
    def __init__(self, opts: Options) -> None:
        self.opts = opts
        self.rows: list[dict[str, Any]] = []  # one per combination (``repeats.combine`` of the runs)
        self.runs: list[dict[str, Any]] = []  # every run, repeats apart
        self.warmups: dict[str, dict[str, Any]] = {}  # workload kind -> the node warm-up before it
        self.stopping = False
        self._child: subprocess.Popen[str] | None = None
        self._spy: pyspy.PySpy | None = None

    # -- Ctrl-C ------------------------------------------------------------------------------

    def _on_sigint(self, _signum: int, _frame: Any) -> None:
        if self.stopping:  # second Ctrl-C
            self._kill()
            raise KeyboardInterrupt
        self.stopping = True
        print("\n[profiling] Ctrl-C: finishing the current run early, then writing the reports "
              "(Ctrl-C again to abort it)", flush=True)
        if self._child and self._child.poll() is None:
            self._child.send_signal(signal.SIGINT)

    def _kill(self) -> None:
        for proc in (self._child, self._spy.proc if self._spy else None):
            if proc is not None and proc.poll() is None:
                proc.kill()

    # -- the session -------------------------------------------------------------------------

    def run(self) -> list[dict[str, Any]]:
        os.makedirs(self.opts.out, exist_ok=True)
        previous = signal.signal(signal.SIGINT, self._on_sigint)
        try:
            order = repeats.plan(self.opts.combos(), self.opts.repeat)
            if self.opts.recheck_first and order:
                order.append((repeats.CHECK, order[0][1]))  # type: ignore[arg-type]
            for n, (repeat, (kind, pattern, factory)) in enumerate(order, 1):
                if self.stopping:
                    break
                if kind not in self.warmups:  # the node, once per workload, before its first run
                    self.warmups[kind] = warmup.session_warm_up(self.opts, kind, lambda: self.stopping)
                    if self.stopping:  # Ctrl-C during the warm-up
                        break
                label = "" if self.opts.repeat == 1 and repeat == 1 else (
                    " (warm-up check: the first run again)" if repeat == repeats.CHECK
                    else f" (repeat {repeat}/{self.opts.repeat})")
                print(f"[profiling] {n}/{len(order)} {kind} {pattern} {factory}{label}", flush=True)
                try:
                    row = self.run_one(kind, pattern, factory, repeat)
                except KeyboardInterrupt:
                    break
                row["repeat"] = repeat
                self.runs.append(row)
                print("  " + report.one_line(row), flush=True)
                self.rows = repeats.combine(self.runs)
                for r in self.rows:
                    if r["workload"] in self.warmups:
                        r["node_warmup"] = self.warmups[r["workload"]]
                report.write_json(self.rows, self.opts.out)
        finally:
            signal.signal(signal.SIGINT, previous)
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
            [sys.executable, "-m", "profiling.child"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, start_new_session=True, cwd=os.getcwd())
        lines = _reader(child)
        try:
            self._send(spec.to_json())
            kind_, msg = self._expect(lines, ("ready", "failed"), o.timeout)
            if kind_ == "failed":
                return _failed(row, msg["error"])
            raw = os.path.join(o.out, f"{name}.raw.txt")
            spy_problem = self._start_spy(child.pid, raw, spec.multiprocess) if o.pyspy else None
            self._send("go")
            _kind, result = self._expect(lines, ("done",), o.timeout)
            if self._spy:
                spy_problem = self._spy.stop()
                self._spy = None
            if o.cprofile and not self.stopping and repeat == 1:  # once per combination
                prof = os.path.join(o.out, f"{name}.prof")
                self._send(f"cprofile {o.cprofile_ops or max(1, o.num_ops // 4)} {os.path.abspath(prof)}")
                _kind, profiled = self._expect(lines, ("profiled",), o.timeout)
                row["artifacts"]["prof"] = os.path.basename(prof)
                row["cprofile_ops"] = profiled["ops"]
            else:
                self._send("exit")
            child.wait(60)
        except (ChildEnded, TimeoutError, subprocess.TimeoutExpired, BrokenPipeError) as exc:
            return _failed(row, f"{type(exc).__name__}: {exc}")
        finally:
            self._kill()
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
            stacks = list(sampling.parse_raw(f))
        samples = sampling.Samples.of(stacks)
        inst = row["instrumented_ns"]
        if row["instrumentation"] == "on":  # the samples are classified by the regions' frames
            row["shares"]["sampled"] = samples.shares(inst["threads"], inst["process_ns"], row["wall_s"] * 1e9)
        row["samples"] = {"busy": samples.busy, "idle": samples.idle, "rate_hz": self.opts.rate,
                          "counts": samples.counts()}
        row["agreement_pts"] = report.agreement(row["shares"])
        if samples.busy < 200:
            row["warnings"].append(f"only {samples.busy} CPU samples: the sampled shares are rough "
                                   "(raise -n or --rate)")
        title = f"{row['workload']} {row['pattern']} {row['factory']}"
        cpu = list(sampling.cpu_stacks(stacks))
        write_svg(os.path.join(self.opts.out, f"{name}.svg"), cpu, title)
        write_speedscope(os.path.join(self.opts.out, f"{name}.speedscope.json"), cpu, title)
        row["artifacts"].update(flamegraph=f"{name}.svg", speedscope=f"{name}.speedscope.json",
                                raw=os.path.basename(raw))

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
                raise ChildEnded(f"the run's process ended (exit code {self._child and self._child.wait()}) "
                                  f"before saying {'/'.join(kinds)}")
            if line.startswith(PREFIX):
                kind, _, payload = line[len(PREFIX):].partition(" ")
                if kind in kinds:
                    return kind, json.loads(payload)
            else:
                print(f"  | {line}", flush=True)


def _reader(child: subprocess.Popen[str]) -> queue.Queue[str | None]:
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def _failed(row: dict[str, Any], error: str) -> dict[str, Any]:
    print(f"  FAILED: {error}", flush=True)
    row.update(ops=0, errors=0, failed=error, wall_s=0.0, client_cpu_s=0.0,
               shares={"instrumented": None, "sampled": None})
    return row


def _fill(row: dict[str, Any], measured: Measurement) -> None:
    row.update(measured.record())
    row["shares"] = {"instrumented": instrument.shares(measured.instrumented) if row["instrumentation"] == "on"
                     else None, "sampled": None}
    row["method"] = dict(report.METHODS)
    if measured.errors:
        row["warnings"].append(f"{measured.errors} errors: {measured.error_kinds}; "
                               f"first: {measured.first_error}")


def prepare_data(opts: Options) -> None:
    """Create the keyspace and tables, load the partitions the selects read."""
    from .client import connection_class

    cluster, session = connect(opts.contact(), connection_class=connection_class(opts.connection_class),
                               **({"protocol_version": opts.protocol_version} if opts.protocol_version else {}))
    try:
        for kind in opts.kinds:
            opts.workload(kind).load(session)
    finally:
        cluster.shutdown()


def drop_data(opts: Options) -> None:
    from .client import connection_class

    try:
        cluster, session = connect(opts.contact(), connection_class=connection_class(opts.connection_class))
    except Exception as exc:  # leaving data behind is no reason to lose the results
        print(f"[profiling] could not drop keyspace {opts.keyspace}: {exc}", flush=True)
        return
    try:
        session.execute(f"DROP KEYSPACE IF EXISTS {opts.keyspace}", timeout=60)
    except Exception as exc:
        print(f"[profiling] could not drop keyspace {opts.keyspace}: {exc}", flush=True)
    finally:
        cluster.shutdown()


def run_session(opts: Options) -> int:
    """A cluster (``--hosts``, or the local node, started if needed and then stopped), data,
    every run, the reports."""
    harness = Harness(opts)
    try:
        with reach(opts.hosts, opts.port) as contact:
            opts.hosts, opts.port = contact.hosts, contact.port
            try:
                print(f"[profiling] cluster {contact}, keyspace {opts.keyspace}, output {opts.out}", flush=True)
                prepare_data(opts)
                harness.run()
            except KeyboardInterrupt:
                harness.stopping = True
            finally:
                try:
                    write_reports(opts, harness.rows)
                finally:
                    if not opts.keep_data:
                        drop_data(opts)
    except KeyboardInterrupt:  # while the node was starting or stopping: what there is is reported
        harness.stopping = True
        write_reports(opts, harness.rows)
    if harness.stopping:
        return 130
    return 1 if any(r.get("failed") for r in harness.rows) else 0


def write_reports(opts: Options, rows: list[dict[str, Any]]) -> None:
    os.makedirs(opts.out, exist_ok=True)
    meta = {"command": opts.command, "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            "python": sys.version.split()[0], "driver": _driver_version(),
            "reactor": opts.connection_class, "ops per run": opts.num_ops,
            "requests": f"{opts.statement} statements, timeout "
                        f"{'none' if opts.request_timeout is None else f'{opts.request_timeout:g} s'}",
            "instrumentation": "on" if opts.instrumentation else "off",
            "py-spy": f"{opts.rate} Hz{', native' if opts.native else ''}" if opts.pyspy else "off",
            **warmup.settings(opts)}
    advice.annotate(rows)
    paths = [report.write_json(rows, opts.out), report.write_markdown(rows, opts.out, meta),
             report.write_html(rows, opts.out, meta)]
    print("\n" + report.table(rows))
    print("\n".join(report.costs(rows)))
    if repeats.check_line(rows):
        print(repeats.check_line(rows))
    for row in rows:
        for w in row.get("warnings", []):
            print(f"  {row['workload']} {row['pattern']} {row['factory']}: {w}")
    if advice.lines(rows):
        print("\nadvice:\n" + "\n".join(f"  - {t}" for t in advice.lines(rows)))
    print("\n" + "\n".join(f"[profiling] wrote {p}" for p in paths))
    print(f"[profiling] open {os.path.abspath(paths[-1])}", flush=True)


def _driver_version() -> str:
    import cassandra

    from pyfactories import _driver

    return f"{_driver.distribution()} {cassandra.__version__}"
