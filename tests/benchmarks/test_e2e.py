"""End to end against the real node (``integration``): a few short rounds, and the capture script."""

import pytest

from benchmarks import bench_e2e, capture, dataset, fixtures

pytestmark = pytest.mark.integration


def test_e2e_rounds_on_the_real_node(bench_cluster):
    hosts, port = bench_cluster
    spec = {"size": "tiny", "rounds": 5, "round_s": 0.01, "workloads": ["single", "pages"],
            "factories": ["named_tuple", "cached_named_tuple"]}
    section = bench_e2e.run(spec, hosts, port, say=lambda _msg: None)
    assert section["cassandra"]["version"]
    assert section["config"]["factories"] == ["tuple", "named_tuple", "cached_named_tuple"]
    for case in section["cases"]:
        res = case["results"]
        assert res["tuple"]["cpu_ratio"] == 1.0 and res["tuple"]["qps_ratio"] == 1.0
        for r in res.values():
            assert len(r["cpu_us_rounds"]) == 5 and r["cpu_us_per_query"] > 0 and r["qps"] > 0
    statuses = {(v["case"], v["what"]): v["status"] for v in section["verdicts"]}
    assert statuses[("single", "CPU/query cached_named_tuple / tuple")] in ("PASS", "MISS")
    assert statuses[("pages", "CPU/query pf_dict / tuple")] == "N/A"  # not in this run
    assert "Issue 5 targets" in bench_e2e.render(section)


def test_capture_writes_fixtures_that_decode(bench_cluster, tmp_path):
    hosts, port = bench_cluster
    cluster, session = dataset.connect(hosts, port)
    try:
        from cassandra.cluster import EXEC_PROFILE_DEFAULT
        from cassandra.query import tuple_factory

        cluster.profile_manager.profiles[EXEC_PROFILE_DEFAULT].row_factory = tuple_factory
        dataset.ensure_dataset(session, say=lambda _msg: None)
        paths = capture.capture_all(session, tmp_path, dataset.cassandra_version(session), say=lambda _msg: None)
    finally:
        cluster.shutdown()
    assert len(paths) == len(capture.CAPTURES)
    for cap in capture.CAPTURES:
        fx = fixtures.load(cap.name, tmp_path)
        assert len(fx.decode().parsed_rows) == cap.rows
        # the same data set gives the same bodies as the fixtures in the repository
        assert fx.body == fixtures.load(cap.name).body


def test_pinned_client_runs_on_its_cpus_and_is_unpinned_after(bench_cluster):
    """--client-cpus: the caller and the driver's event-loop thread run on the given CPU during the run."""
    import os
    import threading

    hosts, port = bench_cluster
    before = os.sched_getaffinity(0)
    cpu = max(before)
    seen = []

    def say(_msg):
        loop = [t for t in threading.enumerate() if "event_loop" in t.name or "libev" in t.name.lower()]
        seen.append((os.sched_getaffinity(0), [os.sched_getaffinity(t.native_id) for t in loop]))

    spec = {"size": "tiny", "rounds": 5, "round_s": 0.01, "workloads": ["single"], "factories": ["named_tuple"],
            "client_cpus": [cpu]}
    section = bench_e2e.run(spec, hosts, port, say=say)
    assert seen and seen[0][0] == {cpu}
    assert seen[0][1] and all(a == {cpu} for a in seen[0][1])
    assert os.sched_getaffinity(0) == before
    assert f"client pinned to CPU {cpu}" in bench_e2e.render(section)
