"""``benchmarks.bench_writes`` without a server: its configurations and the committed results' table."""

from __future__ import annotations

from pathlib import Path

from cassandra.io.libevreactor import LibevConnection

from benchmarks import bench_writes
from benchmarks.reporting.results_json import load_json
from pyfactories.connection._writes_py import CoalescedWrites

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "writes.json"


def test_uncoalesced_is_ours_with_the_drivers_writes():
    cls = bench_writes.DriverWrites
    for name in ("push", "handle_read", "handle_write"):
        assert getattr(cls, name) is getattr(LibevConnection, name)
    assert cls.process_io_buffer is bench_writes.TimerQueueLibevConnection.process_io_buffer
    assert issubclass(bench_writes.TimerQueueLibevConnection, CoalescedWrites)


def test_every_workload_level_and_configuration_is_in_the_table():
    section = load_json(RESULTS)[bench_writes.DEPTH]
    levels = {(c["workload"], c["in_flight"]) for c in section["cases"]}
    assert levels == {(w, n) for w, ns in bench_writes.WORKLOADS.items() for n in ns}
    text = bench_writes.render(section)
    for case in section["cases"]:
        assert list(case["results"]) == list(bench_writes.CONFIGS)
        for name, r in case["results"].items():
            assert r["cpu_vs_uncoalesced"]["range"][0] <= r["cpu_vs_uncoalesced"]["median"]
            assert f"{r['cpu_us_per_request']:.1f} µs" in text


def test_the_writes_alone_measure_both_and_leave_the_drivers_loop_as_it_was():
    from cassandra.io import libevreactor

    before = libevreactor._global_loop
    found = bench_writes.micro(rounds=3, batches=2, batch=20)
    assert libevreactor._global_loop is before
    assert found["driver_us"] > 0 and found["ours_us"] > 0
    assert found["range"][0] <= found["ratio"] <= found["range"][1]
    assert f"ours {found['ours_us']:.2f} µs" in bench_writes.render(
        {"config": {"rounds": 3}, "cases": [], "writes_alone": found})
