"""``benchmarks.bench_framing`` without a server: the framing alone, the committed results' table."""

from __future__ import annotations

from pathlib import Path

from benchmarks import bench_framing
from benchmarks.reporting.results_json import load_json

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "framing.json"


def test_micro_measures_every_step_for_both():
    found = bench_framing.micro(rounds=3, n=20)
    assert set(found) == {"encode a request (v5)", "read a response (v5, 10 segments a read)",
                          "read a response (v4, 10 frames a read)"}
    for r in found.values():
        assert r["driver_us"] > 0 and r["ours_us"] > 0
        assert r["range"][0] <= r["ratio"] <= r["range"][1]


def test_the_sinks_deliver_every_frame():
    for version in (5, 4):
        for cls in (bench_framing._Sink, bench_framing._OurSink):
            read = bench_framing._read_case(version)(cls)
            read()
            read()
            assert read.__closure__ is not None
            conn = next(c.cell_contents for c in read.__closure__ if isinstance(c.cell_contents, cls))
            assert conn.delivered == 20 and conn._iobuf.getvalue() == b""


def test_the_committed_results_render():
    section = load_json(RESULTS)["framing"]
    text = bench_framing.render(section)
    assert {c["workload"] for c in section["cases"]} == set(bench_framing.WORKLOADS)
    for case in section["cases"]:
        assert set(case["results"]) == set(bench_framing.CONFIGS)
        for r in case["results"].values():
            assert f"{r['cpu_us_per_request']:.1f} µs" in text
    for name, r in section["framing_alone"].items():
        assert name in text and f"{r['ours_us']:.2f} µs" in text
