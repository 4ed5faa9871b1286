"""The end-to-end depth's reference configuration: which runs are judged, indicative verdicts elsewhere,
the full size's plan, and the reports with ranges and the unpinned pass (hand-made results)."""

import copy
import os

import pytest

from benchmarks import bench_e2e
from benchmarks.e2e import reference
from benchmarks.reporting import compare, targets

from . import samples

REFERENCE_CONFIG = {"rounds": 21, "client_cpus": [1], "server_cpus": [0]}


@pytest.mark.parametrize("config, why", [
    (REFERENCE_CONFIG, None),
    ({**REFERENCE_CONFIG, "rounds": 41}, None),
    ({**REFERENCE_CONFIG, "rounds": 20}, "20 rounds"),
    ({"rounds": 5}, "client and server not pinned; 5 rounds"),
    ({**REFERENCE_CONFIG, "server_cpus": None, "not_pinned": "not on this machine"},
     "server not pinned (not on this machine)"),
    ({**REFERENCE_CONFIG, "server_cpus": [1]}, "client and server share CPU(s)"),
])
def test_which_configurations_are_the_reference(config, why):
    assert reference.problem(config) == why


def _e2e(config):
    section = copy.deepcopy(samples.results()["e2e"])
    section["config"] = {**section["config"], **config}
    for r in (r for c in section["cases"] for r in c["results"].values()):
        r["cpu_ratio_range"] = [r["cpu_ratio"] * 0.9, r["cpu_ratio"] * 1.1]
    return section


def test_verdicts_outside_the_reference_are_indicative_and_say_why():
    quick = targets.end_to_end(_e2e({"size": "quick", "rounds": 5, "client_cpus": None, "server_cpus": None}))
    judged = [v for v in quick if v.status not in ("REF", "N/A")]
    assert judged and {v.status for v in judged} <= {"~PASS", "~MISS"}
    assert all("indicative: client and server not pinned; 5 rounds" in v.note for v in judged)
    assert all(v.status in ("REF", "N/A") for v in quick if v not in judged)
    text = targets.summary(quick)
    assert "only indicative" in text and "targets met" not in text
    assert not any(line.startswith(("PASS", "MISS")) for line in text.splitlines())
    full = targets.end_to_end(_e2e(REFERENCE_CONFIG))
    single = next(v for v in full if v.case == "single" and "cached_named_tuple" in v.what)
    assert single.status == "PASS" and single.note.startswith("rounds 0.91-1.12")
    assert "indicative" not in targets.summary(full)


def test_the_full_size_is_the_reference_configuration_then_unpinned():
    full, quick = bench_e2e.default_spec("full"), bench_e2e.default_spec("quick")
    usable = sorted(os.sched_getaffinity(0))
    if len(usable) >= 2:
        assert (full["client_cpus"], full["server_cpus"]) == ([usable[-1]], [usable[0]])
        assert reference.problem(full) is None
    else:
        assert "client_cpus" not in full and reference.problem(full)
    assert full["rounds"] >= reference.MIN_ROUNDS and full["unpinned"]["rounds"] < full["rounds"]
    assert full["warmup_s"] > 0 and quick["warmup_s"] > 0
    assert "client_cpus" not in quick and reference.problem(quick)


def test_the_report_puts_ranges_beside_medians_and_the_unpinned_pass_apart():
    section = _e2e(REFERENCE_CONFIG)
    section["verdicts"] = targets.as_json(targets.end_to_end(section))
    side = _e2e({"rounds": 9, "client_cpus": None, "server_cpus": None})
    side["cases"][0]["results"]["named_tuple"]["cpu_us_per_query"] = 777.0
    section["unpinned"] = {**side, "verdicts": []}
    text = bench_e2e.render(section)
    assert "client pinned to CPU 1; server pinned to CPU 0" in text
    assert "1.46x (1.31–1.61)" in text  # named_tuple on single: 511 / 350, with its range
    reference_part, unpinned_part = text.split("#### Unpinned, beside it (not judged; 9 interleaved rounds")
    assert "PASS e2e single" in reference_part and "777 µs" in unpinned_part and "777 µs" not in reference_part
    names = {(f.case, f.factory, f.metric) for f in bench_e2e.figures(section)}
    assert ("single", "named_tuple", "CPU ratio to tuple, unpinned") in names
    assert ("single", "named_tuple", "CPU ratio to tuple") in names
    metrics = compare.metrics({"e2e": section})
    assert ("e2e", "single", "named_tuple", "CPU/query µs, unpinned") in metrics


def test_pinned_apart_pins_client_and_named_servers_and_gives_the_cpus_back_even_on_failure(monkeypatch):
    from profiling.cluster import Contact

    calls = []
    monkeypatch.setattr(reference, "pin", lambda pids, cpus: calls.append(("pin", list(pids), cpus)) or
                        {pid: {0, 1} for pid in pids if cpus})
    monkeypatch.setattr(reference, "unpin", lambda saved, pids: calls.append(("unpin", sorted(saved), list(pids))))
    spec = {"client_cpus": [1], "server_cpus": [0], "server_pids": [4242]}
    with pytest.raises(KeyError):
        with reference.pinned_apart(spec, Contact(["10.0.0.1"], 9042)) as pinned:
            assert pinned == spec and pinned is not spec
            raise KeyError("the run failed")
    me = os.getpid()
    assert calls == [("pin", [me], [1]), ("pin", [4242], [0]), ("unpin", sorted([me, 4242]), [me, 4242])]


def test_a_server_that_cannot_be_pinned_is_an_error_unless_the_run_is_the_reference(monkeypatch):
    from profiling.cluster import Contact

    monkeypatch.setattr(reference, "pin", lambda pids, cpus: {})
    monkeypatch.setattr(reference, "unpin", lambda saved, pids: None)
    elsewhere = Contact(["10.0.0.1"], 9042)  # not a node this machine runs
    with pytest.raises(ValueError, match="server_cpus pins the local node; the cluster at 10.0.0.1:9042 is not"):
        with reference.pinned_apart({"server_cpus": [0]}, elsewhere):
            pass
    said = []
    with reference.pinned_apart({"server_cpus": [0], "reference": True}, elsewhere, said.append) as pinned:
        assert "server_cpus" not in pinned and "--server-pid" in pinned["not_pinned"]
    assert said and "cannot pin the server" in said[0]
