"""Warm-up and repeats against the real node: the node warm-up's trace, the round-robin order of the
repeats, the rows' medians and ranges, the median run's artifacts and the warm-up check. Short runs, its
own keyspace, data left (the node is shared)."""

import os
import threading

import pytest

from profiling.harness import repeats, warmup
from profiling.harness.client import default_reactor, open_client
from profiling.harness.runner import Harness, Options
from profiling.harness.session import prepare_data
from profiling.harness.spec import RunSpec
from profiling.harness.workload import Workload

pytestmark = pytest.mark.integration

KEYSPACE = "pyfactories_profile_test"


def test_the_node_warm_up_loads_the_node_until_its_throughput_stops_climbing(contact):
    opts = Options(hosts=list(contact.hosts), port=contact.port, keyspace=KEYSPACE, patterns=["sync"],
                   factories=["tuple"], kinds=["read"], connection_class=default_reactor())
    prepare_data(opts)
    done = warmup.warm_node(opts, Workload("read", keyspace=KEYSPACE), min_s=1.0, max_s=8.0)
    assert 1.0 <= done.seconds < 8.0 + 5 * warmup.WINDOW_S
    assert len(done.rates) >= 2 * warmup.STEADY_WINDOWS
    # requests answered in most windows (a busy machine may stall the node for one)
    assert sum(rate > 0 for rate in done.rates) > len(done.rates) // 2
    assert done.steady == warmup.steady(done.rates)  # steady: stopped there; else: stopped at max_s


def test_repeats_run_round_robin_after_the_warm_up_and_sum_up_per_combination(contact, tmp_path):
    opts = Options(hosts=list(contact.hosts), port=contact.port, keyspace=KEYSPACE, keep_data=True,
                   out=str(tmp_path), connection_class=default_reactor(), patterns=["sync", "callback_full_pipeline"],
                   factories=["tuple"], kinds=["read"], num_ops=300, warmup=50, profiler="pyspy", repeat=2,
                   warmup_s=1.0, warmup_max_s=6.0, recheck_first=True)
    prepare_data(opts)
    harness = Harness(opts)
    rows = harness.run()
    assert [(r["repeat"], r["pattern"]) for r in harness.runs] == [
        (1, "sync"), (1, "callback_full_pipeline"), (2, "sync"), (2, "callback_full_pipeline"), ("end", "sync")]
    assert [r["pattern"] for r in rows] == ["sync", "callback_full_pipeline"]
    for row in rows:
        assert not row.get("failed") and len(row["repeats"]) == 2
        low, high = row["spread"]["cpu_us_per_op"]
        assert low <= row["cpu_us_per_op"] <= high
        assert row["noisy"] == (high > low * 1.1)
        median_run = next(r for r in row["repeats"] if r["repeat"] == row["median_repeat"])
        assert row["artifacts"]["flamegraph"] == median_run["artifacts"]["flamegraph"]
        assert os.path.exists(tmp_path / row["artifacts"]["flamegraph"])
        assert row["node_warmup"]["seconds"] >= 1.0 and row["node_warmup"]["rates"]
    check = rows[0]["warmup_check"]
    assert check["end_cpu_us_per_op"] == harness.runs[-1]["cpu_us_per_op"] and check["change"] is not None
    assert "warm-up check: read sync tuple" in repeats.check_line(rows)


def _spy_on_requests(client):
    """Record each ``execute_async`` call's ``timeout`` (the request still goes to the node)."""
    timeouts = []
    real = client.session.execute_async

    def execute_async(statement, *args, **kwargs):
        timeouts.append(kwargs.get("timeout", "the session's"))
        return real(statement, *args, **kwargs)

    client.session.execute_async = execute_async
    return timeouts


def test_the_client_warm_up_sends_the_measured_requests_and_stops_when_told(contact):
    opts = Options(hosts=list(contact.hosts), port=contact.port, keyspace=KEYSPACE, patterns=["sync"],
                   factories=["tuple"], kinds=["read"], connection_class=default_reactor())
    prepare_data(opts)
    spec = RunSpec(**{**opts.settings(), "request_timeout": None, "instrumentation": False, "warmup": 30},
                   pattern="future_full_pipeline", factory="tuple", workload=opts.workload("read"))
    client = open_client(spec)
    try:
        timeouts = _spy_on_requests(client)
        warmup.warm_client(client, spec, threading.Event())
        assert timeouts == [None] * 30  # --request-timeout none: no timer, as in the measurement
        assert client.recorder.snapshot()["calls"]["wait"] == 0  # uninstrumented: no timed waits
        timeouts.clear()
        stopped = threading.Event()
        stopped.set()  # Ctrl-C before (or during) the warm-up
        warmup.warm_client(client, spec, stopped)
        assert timeouts == []
    finally:
        client.close()
