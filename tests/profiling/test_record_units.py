"""record and attach without a node: the hooks' guard, the interrupted exit statuses, the
instrumentation's cost, the sampling window's wall time, the texts, and the advice's timers rule,
its skip for writes and the harness's column shape."""

import ast
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from profiling.harness.runner import Options
from profiling.sampling import categories
from profiling.sampling.foreign import KNOWN_FACTORIES, FactoryRule
from profiling.sampling.stacks import parse_raw
from profiling.service import attach, record, results
from profiling.timing import overhead
from tests.profiling.test_service_units import by_category, row
from tests.profiling.test_units import INSTR, LOOP_HEAD

ROOT = Path(__file__).resolve().parents[2]


def shares_of(**given):
    return categories._normalized({**dict.fromkeys(categories.CATEGORIES, 0.0), **given})


# -- the driver hooks inside the recorded process ---------------------------------------------

def test_the_timing_modules_the_hook_loads_by_path_import_only_each_other():
    """The record hook loads ``profiling/timing`` as a package of its own: an import of anything
    else of the profiler would not resolve inside the recorded program."""
    for path in sorted((ROOT / "profiling" / "timing").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                assert node.level in (0, 1), f"{path.name}: from {'.' * node.level}{node.module} import ..."
                assert node.level or not (node.module or "").startswith("profiling"), path.name
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("profiling") for a in node.names), path.name


def test_hooks_that_do_not_fit_the_driver_warn_and_never_raise(monkeypatch):
    monkeypatch.setenv("PYFACTORIES_RECORD_INSTRUMENT", "0")  # loaded here without its import hook
    monkeypatch.delenv("PYFACTORIES_RECORD_PROF", raising=False)
    path = ROOT / "profiling" / "service" / "recordhook.py"
    spec = importlib.util.spec_from_file_location("_pf_recordhook_under_test", path)
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)

    class OldConnection:  # an old driver's reactor class: no _enable_checksumming
        def process_io_buffer(self):
            pass

        def process_msg(self, header, body):
            pass

        @classmethod
        def create_timer(cls, timeout, callback):
            pass

    session = SimpleNamespace(cluster=SimpleNamespace(connection_class=OldConnection), _pools={},
                              execute_async=lambda *a: None)
    hook.time_session(session)
    hook.time_session(session)
    assert session.cluster.connection_class is OldConnection
    (warning,) = hook._warnings
    assert "not timed" in warning and "_enable_checksumming" in warning


# -- exit statuses ------------------------------------------------------------------------------

@pytest.mark.parametrize("program", ["import os, signal, time; time.sleep(1); os.kill(os.getpid(), signal.SIGTERM)",
                                     "import sys, time; time.sleep(1); sys.exit(143)"])
def test_a_program_ended_by_sigterm_is_marked_interrupted(program, tmp_path):
    done = subprocess.run([sys.executable, "-m", "profiling", "record", "--out", str(tmp_path), "--",
                           sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 143, done.stdout + done.stderr
    (only,) = json.loads((tmp_path / "summary.json").read_text())
    assert only["interrupted"] is True and only["exit_code"] in (-15, 143)


# -- the instrumentation's cost ----------------------------------------------------------------

def totals(**extra):
    regions = dict.fromkeys(("deserialization", "row_factory", "encode", "framing", "dispatch", "timers",
                             "request", "wait"), 0)
    inst = {"process_ns": 10_000_000, "loop_ns": 0, "loop_threads": 1, "threads": {},
            "regions_ns": regions, "regions_on_loop_ns": regions,
            "calls": {**regions, "deserialization": 100, "request": 100, "timers": 200}}
    return {"instrumented": inst, "factories": {}, "requests": {"sent": 100, "with_timeout": 100}, **extra}


def record_row():
    r = results.base_row("record", "prog")
    r.update(wall_s=1.0, client_cpu_s=0.01)
    return r


def test_record_reports_the_instrumentation_cost_calibrated_in_the_recorded_process():
    r = record_row()
    record._add_instrumented(r, totals(region_call_ns=500.0))
    assert r["instrumentation"] == "on"
    cost = r["instrumentation_cost"]
    assert cost["calls_per_query"] == 4 and cost["us_per_query"] == pytest.approx(2.0)
    assert cost["share_of_cpu"] == pytest.approx(2.0 / 100)
    text = overhead.describe(r)
    assert text.startswith("instrumentation >= 2.00 µs/query") and "in the recorded process" in text


def test_record_calibrates_here_when_the_recorded_process_could_not():
    r = record_row()
    record._add_instrumented(r, totals(region_call_error="ImportError: no driver"))
    cost = r["instrumentation_cost"]
    assert cost["region_call_ns"] > 0 and "in the profiler's process" in cost["calibrated"]
    assert "ImportError: no driver" in overhead.describe(r)


def test_record_passes_on_the_recorded_processs_warnings_and_counts():
    r = record_row()
    record._add_instrumented(r, totals(region_call_ns=500.0, warnings=["hooks skipped"]))
    assert "hooks skipped" in r["warnings"] and r["requests"] == {"sent": 100, "with_timeout": 100}
    assert r["rows"] == 0


# -- the sampled window ---------------------------------------------------------------------------

def test_the_services_sampled_shares_split_the_loops_kernel_cpu_over_the_window(tmp_path):
    """As for the harness's runs: the kernel CPU is split with the sampling window (``wall_ns``), which
    gives other shares than the split without it."""
    src = tmp_path / "reactor.py"
    src.write_text("def f(self):\n    self._socket.send(m)\n    self._socket.recv(9)\n")
    clock_line = next(n for n, text in enumerate(Path(INSTR).read_text().splitlines(), 1) if "= _clock()" in text)
    raw = tmp_path / "x.raw.txt"
    raw.write_text(f"thread (1): event_loop;{LOOP_HEAD};_pf_timer ({INSTR}:{clock_line}) 2\n"
                   f"thread (1): event_loop;f ({src}:3) 1\n"
                   f"thread (1): event_loop;_pf_dispatch ({INSTR}:1);work (/x/y.py:1) 97\n"
                   "thread (1): event_loop;LibevLoop._run_loop (/x/cassandra/io/libevreactor.py:104) 100\n")
    r = results.base_row("record", "prog")
    threads = {"1": {"name": "event_loop", "ns": 170, "sys_ns": 100}}
    results.add_samples(r, str(raw), str(tmp_path), "x", threads, 170, FactoryRule(KNOWN_FACTORIES), 500, 2000)
    samples = categories.Samples.of(list(parse_raw(raw.read_text().splitlines())))
    with_window = samples.shares(threads, 170, 2000)
    assert with_window != pytest.approx(samples.shares(threads, 170))
    assert r["shares"]["sampled"] == pytest.approx(with_window)


# -- texts ----------------------------------------------------------------------------------------

def test_the_texts_name_socket_where_compiled_or_unmapped_work_lands():
    twisted = results.reactor_note({"cassandra_driver_twisted_event_loop"})
    none = results.reactor_note({"MainThread"})
    for text in (attach.NOT_NATIVE, twisted, none):
        assert "socket" in text and " io" not in text, text


# -- advice ----------------------------------------------------------------------------------------

def test_timers_advice_when_the_requests_carry_a_timeout():
    a = by_category({**row(timers=0.2), "request_timeout": 10.0})["timers"]
    assert a.upper_bound and a.expected_pts == pytest.approx(20)
    assert "up to -20 points" in a.text and "`timeout=None`" in a.text and "request_timeout=None" in a.text
    assert "the requests carry a timeout" in a.basis


def test_timers_advice_follows_what_record_counted_and_says_when_it_is_not_known():
    counted = {**row(timers=0.2), "requests": {"sent": 50, "with_timeout": 50}}
    assert "timers" in by_category(counted)
    assert "timers" not in by_category({**counted, "requests": {"sent": 50, "with_timeout": 0}})
    assert "timers" not in by_category({**row(timers=0.2), "request_timeout": None})
    assert "timers" not in by_category({**row(timers=0.04), "request_timeout": 10.0})
    assert "not known" in by_category(row(timers=0.2))["timers"].basis  # attach


def test_no_fastpath_advice_for_runs_that_returned_no_rows(tmp_path):
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"decode": {"cases": [{"id": "c", "rows": 10, "cols": 5, "results": {
        "tuple": {"ns_per_row": 1000.0}, "fastpath_named": {"ns_per_row": 400.0}}}]}}))
    writes = {**row(deserialization=0.3), "ops": 100, "rows": 0}
    assert "deserialization" not in by_category(writes, results_path=str(results))
    reads = {**writes, "rows": 1000}
    assert "deserialization" in by_category(reads, results_path=str(results))


def test_harness_advice_measures_on_the_runs_columns():
    spec = Options(patterns=["sync"], kinds=["read"], factories=["named_tuple"], num_columns=3, column_type="int", rows_per_query=4
                   ).spec("read", "sync", "named_tuple")
    r = {**row(factory="named_tuple", row_factory=0.3), **spec.record(), "ops": 100, "rows": 400}
    a = by_category(r)["row_factory"]
    assert "4 rows x 3 int columns" in a.basis
