"""A profiling session around the runs: its exit code (every run of every repeat counts), the
"runs skipped" count, a failed run said once, and reports written once when a Ctrl-C comes late."""

import socket
from pathlib import Path

import pytest

from profiling.harness import repeats, session
from profiling.harness.client import default_reactor
from profiling.harness.runner import EXIT_CLUSTER_GONE, Harness, Options

ROOT = Path(__file__).resolve().parents[2]
KEYSPACE = "pyfactories_session_test"


def _opts(tmp_path, **kw):
    base = dict(patterns=["sync", "callback_full_pipeline"], factories=["tuple"], kinds=["read"],
                out=str(tmp_path), profiler="none", connection_class=default_reactor())
    return Options(**{**base, **kw})


def _run(repeat, cpu, **kw):
    return {"workload": "read", "pattern": "sync", "factory": "tuple", "ops": 100, "errors": 0, "repeat": repeat,
            "cpu_us_per_op": cpu, "throughput_ops_s": 1000.0, "warnings": [], "artifacts": {}, **kw}


@pytest.mark.parametrize("bad", [{"failed": "ChildEnded: gone"},
                                 {"interrupted": True, "interrupted_reason": "nothing answered for 20 s"}],
                         ids=["failed", "interrupted"])
def test_a_bad_repeat_makes_the_exit_code_non_zero_whichever_run_is_the_median(tmp_path, bad):
    harness = Harness(_opts(tmp_path, repeat=3))
    harness.runs = [_run(1, 300.0), _run(2, 310.0), _run(3, 50.0 if bad.get("interrupted") else None, **bad)]
    harness.rows = repeats.combine(harness.runs)
    assert not harness.rows[0].get("failed") and harness.rows[0]["median_repeat"] == 1
    assert session.exit_code(harness) == 1
    harness.runs = harness.runs[:2]
    harness.rows = repeats.combine(harness.runs)
    assert session.exit_code(harness) == 0
    harness._stop("SIGTERM", 143)
    assert session.exit_code(harness) == 143


def test_skipped_runs_are_counted_as_runs_not_combinations(tmp_path):
    opts = _opts(tmp_path, repeat=3)
    assert session.skipped(opts, runs_made=3) == "3 of 6 runs skipped"  # stopped during repeat 2
    assert session.skipped(_opts(tmp_path, repeat=3, recheck_first=True), 6) == "1 of 7 runs skipped"
    assert session.skipped(_opts(tmp_path), 0) == "2 of 2 runs skipped"


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_failed_run_is_said_once(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    harness = Harness(_opts(tmp_path, patterns=["sync"], hosts=["127.0.0.1"], port=_closed_port(), warmup_s=0))
    (row,) = harness.run()
    out = capsys.readouterr().out
    assert "NoHostAvailable" in row["failed"] and out.count("FAILED") == 1, out
    assert harness.exit_code == EXIT_CLUSTER_GONE


@pytest.mark.integration
def test_a_ctrl_c_after_the_reports_does_not_write_them_again(contact, tmp_path, monkeypatch, capsys):
    """Ctrl-C while the session drops its data (as while it stops the node): the reports were
    written already and are not written or printed again."""
    drop = session.drop_data

    def interrupted(opts):
        raise KeyboardInterrupt  # what Python's SIGINT handler raises

    monkeypatch.setattr(session, "drop_data", interrupted)
    opts = _opts(tmp_path, patterns=[], hosts=list(contact.hosts), port=contact.port, keyspace=KEYSPACE)
    try:
        assert session.run_session(opts) == 130
    finally:
        drop(opts)
    out = capsys.readouterr().out
    assert out.count("[profiling] open ") == 1 and out.count("wrote") == 3, out
    assert (tmp_path / "index.html").exists()
