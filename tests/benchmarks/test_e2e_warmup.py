"""The end-to-end benchmark warms the node up with each workload before its rounds (real node)."""

import pytest

from benchmarks import bench_e2e

pytestmark = pytest.mark.integration


def test_each_workload_warms_the_node_up_first_and_short_runs_are_indicative(contact):
    said = []
    spec = {"size": "tiny", "rounds": 5, "round_s": 0.01, "warmup_s": 1.0, "workloads": ["single"],
            "factories": ["cached_named_tuple"]}
    section = bench_e2e.run(spec, contact, say=said.append)
    (case,) = section["cases"]
    warmed = case["node_warmup"]
    assert warmed["seconds"] >= 1.0 and sum(rate > 0 for rate in warmed["rates"]) > len(warmed["rates"]) // 2
    assert any("single: node warm-up" in line for line in said)
    assert section["reference"] is False
    (verdict,) = [v for v in section["verdicts"] if v["case"] == "single" and "cached_named_tuple" in v["what"]]
    assert verdict["status"] in ("~PASS", "~MISS") and "indicative" in verdict["note"]
    low, high = case["results"]["cached_named_tuple"]["cpu_ratio_range"]
    assert low <= case["results"]["cached_named_tuple"]["cpu_ratio"] <= high
