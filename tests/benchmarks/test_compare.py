"""``python -m benchmarks.compare old.json new.json`` on two hand-made results files."""

import json

from benchmarks import compare
from benchmarks.reporting.compare import metrics

from . import samples


def _write(tmp_path, name, data):
    p = tmp_path / name
    p.write_text(json.dumps(data))
    return str(p)


def test_compare_reports_what_moved(tmp_path, capsys):
    old = _write(tmp_path, "old.json", samples.results())
    new = _write(tmp_path, "new.json", samples.results(scale={"pf_dict": 1.2, "cached_named_tuple": 0.9},
                                                       e2e_scale={"cached_named_tuple": 1.05},
                                                       driver="3.29.12", distribution="scylla-driver"))
    assert compare.main([old, new]) == 0
    out = capsys.readouterr().out
    assert "driver.distribution: cassandra-driver -> scylla-driver" in out
    assert "driver.version: 3.30.1 -> 3.29.12" in out
    lines = out.splitlines()
    slower = [ln for ln in lines if "| pf_dict" in ln and "factory" in ln and "ns/call" in ln]
    assert slower and all("+20.0%" in ln and "WORSE" in ln for ln in slower)
    faster = [ln for ln in lines if "| cached_named_tuple" in ln and "ns/call" in ln and "factory" in ln]
    assert faster and all("-10.0%" in ln and "better" in ln for ln in faster)
    # e2e CPU ratio of cached_named_tuple on single: 1.014 -> 1.065, the 1.02 target flips
    assert "PASS -> MISS  e2e single: CPU/query cached_named_tuple / tuple" in out
    # the tuple figures did not move
    assert not [ln for ln in lines if "| tuple " in ln]
    assert "geometric mean" in out


def test_compare_identical_files(tmp_path, capsys):
    p = _write(tmp_path, "same.json", samples.results())
    compare.main([p, p])
    out = capsys.readouterr().out
    assert "nothing moved by 5% or more" in out
    assert "environment changed" not in out
    assert "about the same" in out


def test_compare_single_depth_files(tmp_path, capsys):
    full = samples.results()
    only_factory = {"schema": 1, "env": full["env"], "factory_only": full["factory_only"]}
    p = _write(tmp_path, "f.json", only_factory)
    q = _write(tmp_path, "all.json", samples.results(scale={"dict": 2.0}))
    compare.main([p, q, "--threshold", "50"])
    out = capsys.readouterr().out
    assert "(quick, factory_only only)" in out
    assert "+100.0%" in out and "| dict" in out
    # figures only in one file are counted, not compared
    assert "in only one of the files" in out


def test_compare_all_lists_everything(tmp_path, capsys):
    p = _write(tmp_path, "same.json", samples.results())
    compare.main([p, p, "--all"])
    out = capsys.readouterr().out
    n = len(metrics(samples.results()))
    assert f"all {n} figures" in out


def _profile_runs(named_cpu_us):
    """A profiler summary: one pattern, the reference factory and ours."""
    def run(factory, cpu_us, ops_s):
        return {"pattern": "sync", "workload": "read", "factory": factory, "cpu_us_per_op": cpu_us,
                "throughput_ops_s": ops_s}
    return [run("tuple", 200.0, 1000.0), run("cached_named_tuple", named_cpu_us, 900.0),
            {"pattern": "sync", "workload": "read", "factory": "dict", "failed": "NoHostAvailable"}]


def test_compare_reads_profiler_summaries(tmp_path, capsys):
    old = _write(tmp_path, "old.json", _profile_runs(220.0))
    new = _write(tmp_path, "new.json", _profile_runs(180.0))
    assert compare.main([old, new]) == 0
    out = capsys.readouterr().out
    moved = [ln for ln in out.splitlines() if ln.startswith("| profile") and "cached_named_tuple" in ln]
    assert any("CPU ratio to tuple" in ln and "1.1" in ln and "0.9" in ln and "better" in ln for ln in moved)
    assert "profile  0.818x over 1 figures (faster)" in out  # 180/200 over 220/200; the failed run is left out
