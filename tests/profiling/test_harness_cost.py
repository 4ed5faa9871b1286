"""The harness's own cost: simple statements with literal values, a per-request timeout (none:
no timer), instrumentation on or off, and the instrumentation's cost per query in the reports."""

import json
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from profiling.__main__ import build_parser, options
from profiling.harness import patterns
from profiling.harness.client import Client, default_reactor, open_client
from profiling.harness.spec import RunSpec
from profiling.harness.workload import COLUMN_TYPES, Workload
from profiling.report import summary
from profiling.timing import overhead
from profiling.timing.instrument import CATEGORIES

ROOT = Path(__file__).resolve().parents[2]
KEYSPACE = "pyfactories_harness_cost_test"


# -- simple statements -------------------------------------------------------------------------

def test_simple_writes_carry_every_value_as_a_literal_and_are_formatted_through_bind():
    from cassandra.encoder import Encoder

    wrapped = []

    def bind(fn):
        wrapped.append(fn)
        return fn

    workload = Workload("write", num_columns=4, column_type="mixed", keyspace="ks", statement="simple")
    request = workload.requests(None, bind)
    assert len(wrapped) == 1  # one formatter, timed as encode, made once (not per operation)
    text = request(1030)
    literal = Encoder().cql_encode_all_types
    values = ", ".join(literal(v) for v in workload.row(1030 % 1024))
    assert text == f"INSERT INTO {workload.table} (p, c, v0, v1, v2, v3) VALUES ({1030 % 997}, 1030, {values})"
    assert "?" not in text and request(7) != request(8)


def test_simple_reads_select_the_partitions_the_prepared_reads_select():
    workload = Workload("read", keyspace="ks", statement="simple")
    request = workload.requests(None, lambda fn: fn)
    assert request(3) == f"SELECT * FROM {workload.table} WHERE p = 3"
    assert request(103) == request(3)


def test_an_unknown_statement_kind_is_refused():
    with pytest.raises(ValueError, match="statement must be one of prepared, simple, not 'bound'"):
        Workload(statement="bound")


# -- the request timeout -----------------------------------------------------------------------

class _Answered:
    def __init__(self, result=None):
        self.result_value = result

    def result(self):
        return self.result_value

    def add_callbacks(self, ok, err, errback_args=()):
        ok(self.result_value)


def _recording_session():
    calls = []

    def execute_async(statement, **kwargs):
        calls.append(kwargs)
        return _Answered()

    return SimpleNamespace(execute_async=execute_async), calls


@pytest.mark.parametrize("name", ["sync", "future_full_pipeline", "callback_full_pipeline", "async_errback"])
@pytest.mark.parametrize("timeout", [None, 2.5])
def test_every_request_is_sent_with_the_runs_timeout(name, timeout):
    session, calls = _recording_session()
    ctx = patterns.Context(session, lambda i: i, concurrency=3, request_timeout=timeout)
    patterns.PATTERNS[name].body(ctx, range(7))
    assert calls == [{"timeout": timeout}] * 7
    assert ctx.tally.ok == 7 and ctx.tally.rows == 0  # a write's None result: no rows


def test_without_a_request_timeout_the_session_decides():
    session, calls = _recording_session()
    patterns.sync(patterns.Context(session, lambda i: i), range(2))
    assert calls == [{}, {}]


def test_request_timeout_option():
    parse = build_parser().parse_args
    assert parse(["run", "--request-timeout", "none"]).request_timeout is None
    assert parse(["run", "--request-timeout", "NONE"]).request_timeout is None
    assert parse(["run", "--request-timeout", "2.5"]).request_timeout == 2.5
    assert parse(["run"]).request_timeout == 30.0


@pytest.mark.parametrize("bad", ["0", "-1", "soon", "inf", "nan"])
def test_a_bad_request_timeout_is_a_clear_error(bad, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["run", "--request-timeout", bad])
    assert exc.value.code == 2
    assert "--request-timeout" in capsys.readouterr().err


def test_the_options_reach_the_run():
    argv = ["run", "-p", "callback_full_pipeline", "--write", "--statement", "simple", "--concurrency", "1000",
            "--request-timeout", "none", "--instrumentation", "off"]
    spec = options(build_parser().parse_args(argv), argv).spec("write", "callback_full_pipeline", "tuple")
    assert (spec.workload.statement, spec.concurrency, spec.request_timeout, spec.instrumentation) == (
        "simple", 1000, None, False)
    assert RunSpec.from_json(spec.to_json()) == spec
    assert spec.record()["instrumentation"] == "off"


# -- the instrumentation's cost ----------------------------------------------------------------

def test_one_region_costs_at_least_the_clock_read_it_makes_twice():
    clock, n = time.thread_time_ns, 2000
    reads = []
    for _ in range(5):
        t0 = clock()
        for _ in range(n):
            clock()
        reads.append((clock() - t0) / n)
    # (a calibration a busy machine disturbed, its bare rounds slowed more than its timed ones, is made again)
    assert max(overhead.calibrate(calls=n) for _ in range(3)) >= min(reads)


def test_the_calibration_recovers_a_cost_planted_in_the_regions_clock(monkeypatch):
    """Each region reads its clock twice: a clock made 5 µs slower makes a region ~10 µs costlier."""
    from profiling.timing import instrument

    def slow_clock():
        end = time.thread_time_ns() + 5000
        while (now := time.thread_time_ns()) < end:
            pass
        return now

    found = []
    for _ in range(3):  # (a pair of calibrations a busy machine disturbed is made again)
        plain = overhead.calibrate(calls=500, work=lambda k: k)
        with monkeypatch.context() as patched:
            patched.setattr(instrument, "_clock", slow_clock)
            found.append(overhead.calibrate(calls=500, work=lambda k: k) - plain)
        if 10_000 * 0.9 < found[-1] < 10_000 * 1.5:
            break
    assert 10_000 * 0.9 < found[-1] < 10_000 * 1.5, found


def test_a_calibration_needs_calls():
    with pytest.raises(ValueError, match="at least one call"):
        overhead.calibrate(calls=0)


def test_the_cost_counts_every_region_the_recorder_has():
    calls = {"encode": 200, "deserialization": 100, "framing": 300, "timers": 400}  # any region names
    cost = overhead.cost({"calls": calls}, region_call_ns=1500.0, queries=100, cpu_us_per_op=60.0)
    assert cost["calls_per_query"] == 10 and cost["us_per_query"] == 15.0
    assert cost["share_of_cpu"] == pytest.approx(0.25)
    assert overhead.cost({"calls": calls}, None, 100, 60.0) is None  # not instrumented
    assert overhead.cost({"calls": calls}, 1500.0, 0, None) is None  # nothing ran


def test_every_report_prints_the_cost(tmp_path):
    rows = [_row("on", {"region_call_ns": 1500.0, "calls_per_query": 3.0, "us_per_query": 4.5,
                        "share_of_cpu": 0.09}),
            _row("off", None)]
    assert "instrumentation >= 4.50 µs/query = 9.0% of CPU/op (3 region calls/query x 1500 ns, calibrated)" in \
        summary.one_line(rows[0])
    assert "instrumentation off" in summary.one_line(rows[1])
    meta = {"command": "python -m profiling run", "date": "now"}
    for text in (Path(summary.write_markdown(rows, str(tmp_path), meta)).read_text(),
                 Path(summary.write_html(rows, str(tmp_path), meta)).read_text()):
        assert "4.50 µs/query" in text and "instrumentation off" in text
        assert "instrumentation cost" in text  # the method
    saved = json.loads(Path(summary.write_json(rows, str(tmp_path))).read_text())
    assert saved[0]["instrumentation_cost"]["us_per_query"] == 4.5


def _row(instrumentation, cost):
    shares = dict.fromkeys(CATEGORIES, 1 / len(CATEGORIES)) if instrumentation == "on" else None
    return {"pattern": "callback_full_pipeline", "workload": "write", "factory": "tuple", "ops": 10,
            "errors": 0, "throughput_ops_s": 100.0, "cpu_us_per_op": 50.0, "instrumentation": instrumentation,
            "instrumentation_cost": cost, "shares": {"instrumented": shares, "sampled": None}}


# -- against the node --------------------------------------------------------------------------

def _spec(contact, **changes):
    fields = {"pattern": "callback_full_pipeline", "factory": "tuple", "hosts": list(contact.hosts),
              "port": contact.port, "connection_class": default_reactor(),
              "workload": Workload("write", column_type="mixed", num_columns=len(COLUMN_TYPES),
                                   keyspace=KEYSPACE, statement="simple")}
    return RunSpec(**{**fields, **changes})


@pytest.mark.integration
def test_simple_statements_write_the_values_prepared_ones_would(contact):
    spec = _spec(contact, instrumentation=False)
    client = open_client(spec)
    try:
        spec.workload.create_schema(client.session)
        ctx = client.context(concurrency=20)
        patterns.callback_full_pipeline(ctx, range(5000, 5040))
        assert (ctx.tally.ok, ctx.tally.errors) == (40, 0), ctx.tally.first_error
        names = ", ".join(f"v{k}" for k in range(spec.workload.num_columns))
        for i in (5000, 5039):
            row = client.session.execute(
                f"SELECT {names} FROM {spec.workload.table} WHERE p = {i % 997} AND c = {i}").one()
            assert tuple(row) == spec.workload.row(i % 1024)
    finally:
        client.close()


@pytest.mark.integration
def test_instrumentation_off_leaves_the_driver_unwrapped(contact):
    client: Client = open_client(_spec(contact, instrumentation=False))
    try:
        assert not client.session.client_protocol_handler.__name__.startswith("Timed")
        ctx = client.context()
        assert ctx.wait is patterns._no_wait and ctx.request_timeout == 30.0
        client.session.execute("SELECT * FROM system.local")
        assert sum(client.recorder.snapshot()["calls"].values()) == 0
    finally:
        client.close()


@pytest.mark.integration
def test_the_cli_runs_the_scripts_workload_with_and_without_instrumentation(contact, tmp_path):
    rows = {}
    for mode in ("on", "off"):
        out = tmp_path / mode
        proc = subprocess.run(
            [sys.executable, "-m", "profiling", "run", "-H", ",".join(contact.hosts), "--port", str(contact.port),
             "--keyspace", KEYSPACE, "--keep-data", "--node-warmup", "0", "--out", str(out), "-p", "callback_full_pipeline", "--write",
             "--statement", "simple", "--concurrency", "200", "--request-timeout", "none", "-n", "2000",
             "--profiler", "pyspy", "--instrumentation", mode],
            cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        rows[mode] = json.loads((out / "summary.json").read_text())[0]
        assert rows[mode]["ops"] == 2000 and rows[mode]["errors"] == 0
        assert "instrumentation" in proc.stdout
    on, off = rows["on"], rows["off"]
    assert (on["statement"], on["request_timeout"], on["concurrency"]) == ("simple", None, 200)
    # every region call the recorder counted, per query: at least bind (the text formatted),
    # encode_message and decode_message per write
    calls = on["instrumented_ns"]["calls"]
    assert on["instrumentation_cost"]["calls_per_query"] == pytest.approx(sum(calls.values()) / 2000, abs=0.01)
    assert min(calls["encode"], calls["deserialization"]) >= 2000
    assert 0 < on["instrumentation_cost"]["us_per_query"] < on["cpu_us_per_op"]
    assert set(on["shares"]["instrumented"]) == set(CATEGORIES)
    assert off["shares"] == {"instrumented": None, "sampled": None} and off["instrumentation_cost"] is None
    assert sum(off["instrumented_ns"]["calls"].values()) == 0  # no wrapper ran
    assert (tmp_path / "off" / off["artifacts"]["flamegraph"]).stat().st_size > 0  # the flamegraph still is
