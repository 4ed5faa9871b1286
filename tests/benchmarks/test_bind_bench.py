"""``benchmarks.bench_bind``: what it times binds the same, a small run measures every case, and the committed
results' table shows their figures."""

from __future__ import annotations

from pathlib import Path

from cassandra.query import BoundStatement

from benchmarks import bench_bind
from benchmarks.reporting.results_json import load_json

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "bind.json"


def test_every_timed_bind_gives_the_drivers_statement():
    prepared = bench_bind.statement()
    for values in bench_bind.rows(20):
        reference = BoundStatement(prepared).bind(values)
        for name, bind in bench_bind.BINDS.items():
            bound = bind(prepared, values)
            assert (bound.values, bound.routing_key) == (reference.values, reference.routing_key), name
    assert [c.type.typename for c in prepared.column_metadata].count("text") == 2


def test_a_small_run_measures_every_case_and_implementation():
    section = bench_bind.run(bench_bind.default_spec("tiny"), say=lambda _msg: None)
    assert [c["case"] for c in section["cases"]] == list(bench_bind.CASES)
    for case in section["cases"]:
        assert list(case["results"]) == list(bench_bind.BINDS)
        assert case["results"]["driver"]["vs_driver"] == 1.0
        for res in case["results"].values():
            assert res["ns"] > 0 and len(res["samples_ns"]) == 3 and res["range"][0] <= res["vs_driver"]


def test_the_committed_results_render_their_figures():
    section = load_json(RESULTS)[bench_bind.DEPTH]
    text = bench_bind.render(section)
    for case in section["cases"]:
        for res in case["results"].values():
            assert f"{res['range'][0]:.2f}–{res['range'][1]:.2f}" in text
    assert section["config"]["size"] == "full"
    e2e = section["end_to_end"]
    assert f"{e2e['ratio']:.2f}x ({e2e['range'][0]:.2f}–{e2e['range'][1]:.2f})" in text
