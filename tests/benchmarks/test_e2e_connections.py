"""End to end with our connection and a peer driver, against the real node (``integration``): a few
short rounds of the new configurations, the write workload among them."""

import sys

import pytest

from benchmarks import bench_e2e

pytestmark = pytest.mark.integration


def test_our_connection_and_the_peer_run_in_the_same_rounds_as_the_drivers_tuple_path(contact):
    spec = {"size": "tiny", "rounds": 3, "round_s": 0.01, "warmup_s": 0.0, "workloads": ["single50", "insert1000"],
            "factories": ["fastpath_named", "fastpath_named+conn", "acsylla"]}
    section = bench_e2e.run(spec, contact, say=lambda _msg: None)
    assert section["config"]["factories"] == ["tuple", "fastpath_named", "fastpath_named+conn", "acsylla"]
    described = section["configurations"]
    assert described["tuple"]["client"].startswith("LibevConnection")
    assert described["fastpath_named+conn"]["client"].startswith("TimerQueueLibevConnection")
    assert described["acsylla"]["client"].startswith("acsylla 1.2.0")
    assert section["notes"] == []
    for case in section["cases"]:
        res = case["results"]
        assert list(res) == section["config"]["factories"]
        assert res["tuple"]["cpu_ratio"] == 1.0
        for r in res.values():
            assert len(r["cpu_us_rounds"]) == 3 and r["cpu_us_per_query"] > 0 and r["qps"] > 0
    [insert] = [c for c in section["cases"] if c["id"] == "insert1000"]
    assert insert["request_timeout"] == 10.0 and insert["queries_per_round"] >= 1000
    statuses = {(v["case"], v["what"]): v["status"] for v in section["verdicts"]}
    assert statuses[("insert1000", "CPU/query fastpath_named+conn / tuple")] in ("~PASS", "~MISS")
    assert statuses[("single50", "CPU/query fastpath_named+conn / tuple")] in ("~PASS", "~MISS")
    assert statuses[("pages", "CPU/query fastpath_named+conn / fastpath_named")] == "N/A"  # not in this run
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in bench_e2e.render(section).splitlines()
            if ln.startswith("| ")]
    assert ["fastpath_named+conn", "ours"] in [r[:2] for r in rows] and ["acsylla", "acsylla"] in [r[:2] for r in rows]


def test_a_peer_that_does_not_import_is_a_note_not_an_error(contact, monkeypatch):
    monkeypatch.setitem(sys.modules, "acsylla", None)
    spec = {"size": "tiny", "rounds": 3, "round_s": 0.01, "warmup_s": 0.0, "workloads": ["single"],
            "factories": ["acsylla"]}
    section = bench_e2e.run(spec, contact, say=lambda _msg: None)
    assert section["config"]["factories"] == ["tuple"]
    assert [n.split(":")[0] for n in section["notes"]] == ["`acsylla` skipped"]
    assert "Note: `acsylla` skipped: acsylla is not importable" in bench_e2e.render(section)
