"""``benchmarks.bench_timeouts`` without a server: the rounds, the ratios, the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import bench_timeouts
from benchmarks.e2e import connection_bench
from benchmarks.reporting.results_json import load_json

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "timeouts.json"


class FakeWorkers:
    """Each configuration costs a fixed CPU per request; wall time = CPU; the order of turns is kept."""

    COST = {"driver": 2e-6, "ours": 1.1e-6, "no timeout": 1e-6}

    def __init__(self) -> None:
        self.turns: list[str] = []

    def measure(self, config: str, n: int, in_flight: int):
        self.turns.append(config)
        return self.COST[config] * n, self.COST[config] * n


def test_rounds_are_interleaved_and_rotated_and_ratios_paired():
    workers = FakeWorkers()
    names = list(bench_timeouts.CONFIGS)
    case = connection_bench.bench_level(workers, 50, 3, 0.01, names, bench_timeouts.BASES, say=lambda _: None)
    measured = workers.turns[len(names) + 1:]  # after the warm-up round and the sizing probe
    assert measured == names + names[1:] + names[:1] + names[2:] + names[:2]
    ours = case["results"]["ours"]
    assert ours["cpu_vs_driver"]["median"] == pytest.approx(0.55)
    assert ours["cpu_vs_no_timeout"]["median"] == pytest.approx(1.1)
    assert ours["qps_vs_driver"]["median"] == pytest.approx(2 / 1.1)
    assert ours["cpu_us_per_request"] == pytest.approx(1.1)
    assert case["requests_per_round"] >= 2 * 50 and len(ours["cpu_us_rounds"]) == 3


def test_the_committed_results_render_with_their_vs_columns():
    section = load_json(RESULTS)["timeouts"]
    text = bench_timeouts.render(section)
    assert "CPU vs. driver" in text and "CPU vs. no timeout" in text
    for case in section["cases"]:
        for name, r in case["results"].items():
            assert f"{r['cpu_us_per_request']:.1f} µs" in text
    assert {c["in_flight"] for c in section["cases"]} == set(connection_bench.IN_FLIGHT)
