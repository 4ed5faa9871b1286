"""``python -m profiling record [options] -- COMMAND ...``: run a program that uses the
driver and profile its client CPU from start to exit, without changing its code.

Both methods, as for the harness's own runs:

* instrumented: a ``sitecustomize`` in a temporary folder put first on the program's
  ``PYTHONPATH`` loads :mod:`profiling.service.recordhook`, which times every Session's protocol
  handler and row factory (``--no-instrument`` leaves the program untouched). An existing
  ``sitecustomize`` of the program's environment still runs: the hook's finds and executes
  the next one on the path. It also installs the harness's driver hooks on every Session
  (framing, dispatch, timers, request) and calibrates one timed region's cost at exit, so
  the report gives the instrumentation's cost per query as for the harness's runs;
* sampled: py-spy on the program's process, weighted by each thread's CPU from the kernel
  (``/proc``, polled while it runs) and the process's total from its exit status
  (``getrusage``). With the instrumentation on, py-spy sees its markers and classifies by
  them; without, by :mod:`profiling.sampling.foreign`.

The program's exit code is passed on; Ctrl-C reaches the program (same terminal), which
ends as it would, and the reports are still written. ``--cprofile`` adds a ``.prof`` of the
main thread (take the shares from a run without it: cProfile slows the thread it profiles).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import tempfile
import time
from typing import Any

from .. import factories
from ..sampling import pyspy
from ..sampling.foreign import KNOWN_FACTORIES, FactoryRule
from ..timing import instrument, overhead, procfs
from .results import ServiceError, add_samples, base_row, write_reports

SITECUSTOMIZE = '''"""Written by python -m profiling record: the instrumentation, then the usual sitecustomize."""
import importlib.machinery, importlib.util, os, sys


def _pyfactories_record():
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("_pyfactories_recordhook", os.environ["PYFACTORIES_RECORD_HOOK"])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    nxt = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if nxt is not None and nxt.loader is not None:
        chained = importlib.util.module_from_spec(nxt)
        nxt.loader.exec_module(chained)


_pyfactories_record()
'''
ATTACH_TRIES = 15
#: Exit statuses of a program ended by SIGINT or SIGTERM (killed by it: negative; or exiting
#: with the shell's 128 + signal from its own handler).
INTERRUPTED_CODES = frozenset({-signal.SIGINT, 128 + signal.SIGINT, -signal.SIGTERM, 128 + signal.SIGTERM})


def _environment(folder: str, instrumented: bool, prof: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    with open(os.path.join(folder, "sitecustomize.py"), "w") as f:
        f.write(SITECUSTOMIZE)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (folder, env.get("PYTHONPATH", "")) if p)
    env["PYFACTORIES_RECORD_HOOK"] = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recordhook.py")
    env["PYFACTORIES_RECORD_OUT"] = os.path.join(folder, "totals.json")
    env["PYFACTORIES_RECORD_INSTRUMENT"] = "1" if instrumented else "0"
    if prof:
        env["PYFACTORIES_RECORD_PROF"] = os.path.abspath(prof)
    return env


def _attach_spy(proc: subprocess.Popen[bytes], raw: str, rate: int) -> tuple[pyspy.PySpy | None, str | None]:
    """py-spy on the program once its interpreter is up (it retries while Python starts)."""
    problem = None
    for _ in range(ATTACH_TRIES):
        if proc.poll() is not None:
            return None, "the program ended before py-spy could attach"
        try:
            spy = pyspy.PySpy(proc.pid, raw, rate=rate, native=False, nonblocking=True)
            spy.wait_sampling(10)
            return spy, None
        except RuntimeError as exc:
            problem = str(exc)
            time.sleep(0.2)
    return None, problem


def record(command: list[str], out: str, rate: int, instrumented: bool, factory_names: list[str],
           shown: str, cprofile: bool = False) -> int:
    if not command:
        raise ServiceError("no command: python -m profiling record [options] -- COMMAND ...")
    os.makedirs(out, exist_ok=True)
    raw = os.path.join(out, "record.raw.txt")
    with tempfile.TemporaryDirectory(prefix="pyfactories-record-") as folder:
        prof = os.path.join(out, "record.prof") if cprofile else None
        env = _environment(folder, instrumented, prof)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        try:
            proc = subprocess.Popen(command, env=env)
        except OSError as exc:
            raise ServiceError(f"cannot start {command[0]!r}: {exc}") from exc
        watch = procfs.ThreadWatch(proc.pid, period=0.05)
        spy, spy_problem = _attach_spy(proc, raw, rate)
        sampled_from = time.monotonic()
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the program gets it and ends
        terminate = signal.signal(signal.SIGTERM, lambda *_: proc.terminate())  # passed on
        try:
            code = proc.wait()
        finally:
            signal.signal(signal.SIGINT, previous)
            signal.signal(signal.SIGTERM, terminate)
        ended = time.monotonic()
        wall = ended - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # py-spy is still running: the program only
        watch.stop()
        if spy is not None:
            spy_problem = spy.stop()
        totals = _read(os.path.join(folder, "totals.json"))
    cpu_ns = max((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1e9,
                 float(sum(t["ns"] for t in watch.threads(baseline=False).values())))
    row = base_row("record", " ".join(command))
    row.update(exit_code=code, wall_s=wall, client_cpu_s=cpu_ns / 1e9, interrupted=code in INTERRUPTED_CODES,
               instrumentation="off")
    if instrumented:
        _add_instrumented(row, totals)
    if prof and os.path.exists(prof):
        row["artifacts"]["prof"] = os.path.basename(prof)
        row["warnings"].append("cProfile ran in the main thread for the whole run: it slowed that thread, "
                               "so the shares lean towards other; record without --cprofile for the shares")
    if spy is None or spy_problem or not os.path.exists(raw):
        row["warnings"].append(f"no py-spy samples: {spy_problem}")
    else:
        add_samples(row, raw, out, "record", watch.threads(baseline=False), cpu_ns,
                    FactoryRule(KNOWN_FACTORIES | frozenset(factory_names)), rate, (ended - sampled_from) * 1e9)
    meta: dict[str, Any] = {"command": shown, "exit code": code, "py-spy": f"{rate} Hz",
                            "instrumented": "on" if instrumented else "off"}
    if totals and totals.get("driver"):
        meta.update({f"driver {k}": v for k, v in totals["driver"].items()})
    write_reports([row], out, meta)
    return code if code >= 0 else 128 - code


def _read(path: str) -> dict[str, Any] | None:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _add_instrumented(row: dict[str, Any], totals: dict[str, Any] | None) -> None:
    row["instrumentation"] = "on"
    if not totals:
        row["warnings"].append("no instrumented totals: the program created no Session, or did not exit "
                               "normally (killed, os._exit)")
        return
    inst = totals["instrumented"]
    row["instrumented_ns"] = inst
    row["shares"]["instrumented"] = instrument.shares(inst)
    row["ops"] = inst["calls"]["deserialization"]  # responses decoded
    row["throughput_ops_s"] = row["ops"] / row["wall_s"] if row["wall_s"] else 0.0
    row["cpu_us_per_op"] = row["client_cpu_s"] / row["ops"] * 1e6 if row["ops"] else None
    row["warnings"].extend(totals.get("warnings") or [])
    if totals.get("requests"):
        row["requests"] = totals["requests"]
    row["instrumentation_cost"] = _instrumentation_cost(row, totals)
    used = totals.get("factories") or {}
    row["rows"] = sum(u["rows"] for u in used.values())
    if used:
        name = max(used, key=lambda n: used[n]["calls"])
        row["factory"] = name.rsplit(".", 1)[-1]
        row["factory_ref"] = registered_name(name)
        row["factories_used"] = used
        calls, rows = used[name]["calls"], used[name]["rows"]
        costs = totals.get("factory_costs")
        row["shape"] = [costs["rows"] if costs else max(1, round(rows / max(calls, 1))), costs["columns"]
                        if costs else 5]
    if totals.get("factory_costs"):
        row["factory_costs"] = totals["factory_costs"]
    if totals.get("factory_costs_error"):
        row["warnings"].append(f"the factory in use could not be measured again: {totals['factory_costs_error']}")


def _instrumentation_cost(row: dict[str, Any], totals: dict[str, Any]) -> dict[str, Any] | None:
    """The timed regions' cost per query: one region call calibrated in the recorded process at its
    exit, or, when it could not, here in the profiler's process (same interpreter and driver
    expected, not guaranteed), which the text then says."""
    region_ns = totals.get("region_call_ns")
    where = "in the recorded process at its exit"
    if region_ns is None:
        try:
            region_ns = overhead.calibrate()
        except Exception as exc:  # no driver importable here either: no cost, say why
            row["warnings"].append(f"the instrumentation's cost could not be calibrated: "
                                   f"{totals.get('region_call_error')}; here: {type(exc).__name__}: {exc}")
            return None
        where = f"in the profiler's process (the recorded process could not: {totals.get('region_call_error')})"
    cost = overhead.cost(row["instrumented_ns"], region_ns, row["ops"], row["cpu_us_per_op"])
    if cost:
        cost["calibrated"] = where
    return cost


def registered_name(qualified: str) -> str | None:
    """The registry's name of a factory known by its module and function, if it is registered."""
    module, _, attr = qualified.rpartition(".")
    for candidate in (qualified, f"pyfactories.{attr}" if module.startswith("pyfactories") else ""):
        try:
            found = factories.resolve(candidate) if candidate else None
        except ValueError:
            continue
        if found and found.family != "custom":
            return found.name
    return None


def run_record(args: Any, shown: str) -> int:
    from .attach import short_names

    command = args.command_line[1:] if args.command_line[:1] == ["--"] else args.command_line
    return record(command, args.out, args.rate, not args.no_instrument, short_names(args.row_factory), shown,
                  cprofile=args.cprofile)
