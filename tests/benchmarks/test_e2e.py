"""End to end against the real node (``integration``): a few short rounds, and the capture script."""

import pytest

from benchmarks import bench_e2e
from benchmarks.data import capture, dataset, fixtures
from profiling.cluster import connect

pytestmark = pytest.mark.integration


def test_e2e_rounds_on_the_real_node(contact):
    spec = {"size": "tiny", "rounds": 5, "round_s": 0.01, "workloads": ["single", "pages"],
            "factories": ["named_tuple", "cached_named_tuple"]}
    section = bench_e2e.run(spec, contact, say=lambda _msg: None)
    assert section["cassandra"]["version"]
    assert section["config"]["factories"] == ["tuple", "named_tuple", "cached_named_tuple"]
    for case in section["cases"]:
        res = case["results"]
        assert res["tuple"]["cpu_ratio"] == 1.0 and res["tuple"]["qps_ratio"] == 1.0
        for r in res.values():
            assert len(r["cpu_us_rounds"]) == 5 and r["cpu_us_per_query"] > 0 and r["qps"] > 0
    statuses = {(v["case"], v["what"]): v["status"] for v in section["verdicts"]}
    assert statuses[("single", "CPU/query cached_named_tuple / tuple")] in ("~PASS", "~MISS")  # 5 rounds, unpinned
    assert statuses[("pages", "CPU/query pf_dict / tuple")] == "N/A"  # not in this run
    assert "Targets (client CPU per query" in bench_e2e.render(section)


def test_capture_writes_fixtures_that_decode(contact, tmp_path):
    from cassandra.query import tuple_factory

    cluster, session = connect(contact, row_factory=tuple_factory, **dataset.CONNECT_OPTIONS)
    try:
        dataset.ensure_dataset(session, say=lambda _msg: None)
        paths = capture.capture_all(session, tmp_path, dataset.cassandra_version(session), say=lambda _msg: None)
    finally:
        cluster.shutdown()
    assert len(paths) == len(fixtures.CAPTURES)
    for cap in fixtures.CAPTURES:
        fx = fixtures.load(cap.name, tmp_path)
        assert len(fx.decode().parsed_rows) == cap.rows
        # the same data set gives the same bodies as the fixtures in the repository
        assert fx.body == fixtures.load(cap.name).body


def test_pinned_client_and_server_run_on_their_cpus_and_are_unpinned_after(contact):
    """--client-cpus/--server-cpus: the caller, the driver's event loop and the node's JVM threads stay on
    the given CPUs during the run, and get their old CPU sets back after it."""
    import os
    import threading

    from profiling.node import external_hosts, server_pids

    before = os.sched_getaffinity(0)
    client_cpu, server_cpu = max(before), min(before)
    jvms = server_pids()
    assert jvms or external_hosts()  # the local node is found by its PID
    jvm_before = {pid: os.sched_getaffinity(pid) for pid in jvms}
    seen = []

    def say(_msg):
        loop = [t for t in threading.enumerate() if "event_loop" in t.name]
        seen.append((os.sched_getaffinity(0), [os.sched_getaffinity(t.native_id) for t in loop],
                     [os.sched_getaffinity(int(tid)) for pid in jvms for tid in os.listdir(f"/proc/{pid}/task")]))

    spec = {"size": "tiny", "rounds": 5, "round_s": 0.01, "workloads": ["single"], "factories": ["named_tuple"],
            "client_cpus": [client_cpu], "server_cpus": [server_cpu]}
    section = bench_e2e.run(spec, contact, say=say)
    client, loop, jvm = seen[0]
    assert client == {client_cpu}
    assert loop and all(a == {client_cpu} for a in loop)
    assert all(a == {server_cpu} for a in jvm) and len(jvm) >= len(jvms)
    assert os.sched_getaffinity(0) == before
    assert {pid: os.sched_getaffinity(pid) for pid in jvms} == jvm_before
    rendered = bench_e2e.render(section)
    assert f"client pinned to CPU {client_cpu}" in rendered and f"server pinned to CPU {server_cpu}" in rendered
