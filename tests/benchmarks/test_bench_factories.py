"""The factory-only benchmark runs at a tiny size and reports every factory."""

import json

import pytest

from benchmarks import bench_factories
from benchmarks.reporting import targets


def test_worker_times_every_factory():
    spec = bench_factories.default_spec("tiny", rows=[1, 10], cols=[3], kinds=["mixed"])
    out = bench_factories._work(spec)
    assert set(out["samples"]) == {"1x3 mixed", "10x3 mixed"}
    for by_name in out["samples"].values():
        assert set(by_name) == {"tuple", "copy_tuples", "named_tuple", "cached_named_tuple", "dict", "pf_dict",
                                "ordered_dict", "pf_ordered_dict", "py_cached_named_tuple", "py_dict",
                                "py_ordered_dict", "dataclass_handwritten", "class_row", "py_class_row"}
        assert all(len(v) == spec["rounds"] and min(v) > 0 for v in by_name.values())


@pytest.mark.slow
def test_command_line_at_a_tiny_size(tmp_path, capsys):
    path = tmp_path / "f.json"
    assert bench_factories.main(["--size", "tiny", "--rows", "1,1000", "--cols", "10", "--kinds", "mixed",
                                 "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Mixed table: 10 columns of mixed values" in out and "| 1000 |" in out
    data = json.loads(path.read_text())
    assert data["env"]["driver"]["version"] and data["env"]["python"]["version"]
    section = data["factory_only"]
    assert [c["id"] for c in section["cases"]] == ["1x10 mixed", "1000x10 mixed"]
    r = section["cases"][1]["results"]["cached_named_tuple"]
    assert r["ns_per_row"] == pytest.approx(r["ns_per_call"] / 1000)
    statuses = {(v["case"], v["what"]): v["status"] for v in section["verdicts"]}
    assert statuses[("1x10 mixed", "named_tuple / cached_named_tuple")] in ("PASS", "MISS")
    assert statuses[("10x10 mixed", "cached_named_tuple / copy_tuples")] == "N/A"  # not measured
    assert all(v["status"] in ("PASS", "MISS", "N/A") for v in section["verdicts"])
    assert targets.summary(targets.Verdict(**v) for v in section["verdicts"])
