"""The end-to-end benchmark's configurations (a factory on the driver's connection or ours, peer
drivers), its command line, its interleaved rounds over clients, and its tables with those rows."""

import sys
import warnings

import pytest
from cassandra.cluster import ExecutionProfile

from benchmarks import bench_e2e
from benchmarks.data import inserts
from benchmarks.e2e import configs as e2e_configs
from benchmarks.e2e.configs import Config
from benchmarks.e2e.workloads import WORKLOADS, QueriesFailed, _params
from benchmarks.reporting import targets
from profiling.factories import for_sessions

USABLE = ["tuple", "named_tuple", "fastpath_named"]


def names(configs):
    return [c.name for c in configs]


def test_a_name_says_the_factory_and_the_connection():
    assert e2e_configs.parse("fastpath_named", USABLE) == Config("fastpath_named", "fastpath_named", "driver")
    assert e2e_configs.parse("fastpath_named+conn", USABLE) == Config("fastpath_named+conn", "fastpath_named", "ours")
    acsylla = e2e_configs.parse("acsylla", USABLE)
    assert acsylla.peer and acsylla.connection == "acsylla" and acsylla.factory is None
    for bad in ("nope", "nope+conn", "+conn", "acsylla+conn"):
        with pytest.raises(ValueError, match=r"unknown or unavailable configuration .*\+conn .*acsylla"):
            e2e_configs.parse(bad, USABLE)


def test_the_reference_comes_first_and_connections_multiply_the_factories():
    assert names(e2e_configs.resolve_all(["fastpath_named+conn", "acsylla"], USABLE)) == [
        "tuple", "fastpath_named+conn", "acsylla"]
    both = e2e_configs.resolve_all(["named_tuple", "tuple", "fastpath_named"], USABLE, ["driver", "ours"])
    assert names(both) == ["tuple", "tuple+conn", "named_tuple", "named_tuple+conn", "fastpath_named",
                           "fastpath_named+conn"]
    assert [c.connection for c in both] == ["driver", "ours"] * 3
    # only ours: the reference stays on the driver's connection, and a name given twice counts once
    assert names(e2e_configs.resolve_all(["fastpath_named", "fastpath_named+conn"], USABLE, ["ours"])) == [
        "tuple", "tuple+conn", "fastpath_named+conn"]
    with pytest.raises(ValueError, match="unknown connection"):
        e2e_configs.resolve_all([], USABLE, ["driver", "theirs"])


def test_a_peer_runs_only_its_workloads_and_a_factory_runs_all():
    acsylla, fast = Config("acsylla", None, "acsylla"), Config("fastpath_named", "fastpath_named", "driver")
    assert acsylla.runs("single50") and acsylla.runs("insert1000") and not acsylla.runs("coll")
    assert all(fast.runs(w) for w in WORKLOADS)
    assert all(w in WORKLOADS for w in e2e_configs.PEERS["acsylla"][1])


def test_a_peer_that_does_not_import_is_left_out_with_a_note(monkeypatch):
    configs = e2e_configs.resolve_all(["fastpath_named", "acsylla"], USABLE)
    kept, notes = e2e_configs.usable(configs)
    assert names(kept) == ["tuple", "fastpath_named", "acsylla"] and notes == []  # installed by the dev extra
    monkeypatch.setitem(sys.modules, "acsylla", None)  # import acsylla now raises ImportError
    kept, notes = e2e_configs.usable(configs)
    assert names(kept) == ["tuple", "fastpath_named"]
    assert len(notes) == 1 and notes[0].startswith("`acsylla` skipped: acsylla is not importable")


def test_our_connection_left_out_with_the_reason_when_the_build_has_none(monkeypatch):
    from pyfactories import connection

    assert e2e_configs.ours_unavailable() is None  # this build and driver have it

    def unsupported():
        warnings.warn("pyfactories request timers are off: no libev", RuntimeWarning, stacklevel=2)
        return {}

    monkeypatch.setattr(connection, "cluster_options", unsupported)
    assert "no libev" in e2e_configs.ours_unavailable()
    kept, notes = e2e_configs.usable(e2e_configs.resolve_all(["fastpath_named"], USABLE, ["driver", "ours"]))
    assert names(kept) == ["tuple", "fastpath_named"]
    assert [n.split(":")[0] for n in notes] == ["`tuple+conn` skipped", "`fastpath_named+conn` skipped"]
    assert all("no libev" in n for n in notes)


def test_processes_only_when_a_run_has_more_than_the_drivers_connection():
    assert not e2e_configs.needs_processes(e2e_configs.resolve_all(["fastpath_named"], USABLE))
    assert e2e_configs.needs_processes(e2e_configs.resolve_all(["fastpath_named+conn"], USABLE))
    assert e2e_configs.needs_processes(e2e_configs.resolve_all(["acsylla"], USABLE))


def test_the_command_line_takes_configurations_connections_and_the_new_workloads():
    _, spec = bench_e2e.parse_args(["--workloads", "single50,insert1000,pages", "--factories",
                                    "fastpath_named,fastpath_named+conn,acsylla", "--rounds", "21"])
    assert spec["workloads"] == ["single50", "insert1000", "pages"] and spec["rounds"] == 21
    assert names(bench_e2e.configurations(spec["factories"], spec["connections"])) == [
        "tuple", "fastpath_named", "fastpath_named+conn", "acsylla"]
    _, spec = bench_e2e.parse_args(["--connections", "driver,ours"])
    every = bench_e2e.configurations(spec.get("factories"), spec["connections"])
    assert names(every)[:2] == ["tuple", "tuple+conn"] and len(every) == 2 * len(for_sessions())


@pytest.mark.parametrize("argv, message", [
    (["--workloads", "single,inserts"], "unknown workload(s) inserts"),
    (["--factories", "tuple+conn,fast+conn"], "unknown or unavailable configuration 'fast+conn'"),
    (["--connections", "driver,theirs"], "unknown connection(s) theirs"),
])
def test_bad_options_are_an_error_that_says_why(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        bench_e2e.parse_args(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_the_write_workloads_are_bench_timeouts_inserts_with_the_drivers_default_timeout():
    for n in (50, 1000):
        w = WORKLOADS[f"insert{n}"]
        assert w.in_flight == n and w.query == inserts.INSERT and w.rows == 0 and w.cols == 10
        assert w.pattern == "callback_full_pipeline" and w.schema == inserts.SCHEMA
        assert w.request_timeout == ExecutionProfile().request_timeout  # the driver's own default
    assert _params("inserts") == inserts.rows()
    assert WORKLOADS["single50"].request_timeout == ExecutionProfile().request_timeout
    assert WORKLOADS["single50"].in_flight == 50 and WORKLOADS["single"].request_timeout is None
    assert WORKLOADS["single"].schema == ()


def test_a_write_workload_sends_its_rows_with_its_timeout():
    sent = []

    class Session:
        def prepare(self, query):
            return type("Prepared", (), {"bind": lambda self, params: params, "fetch_size": None})()

        def execute_async(self, bound, timeout):
            sent.append((bound, timeout))
            return type("Future", (), {"add_callbacks": lambda self, ok, err: ok([])})()

    runner = bench_e2e.Runner(Session(), WORKLOADS["insert50"])
    assert runner.measure(120, "tuple")[2] == 0
    assert sent == [(row, 10.0) for row in inserts.rows()[:120]]


class Client:
    """Answers a configuration's segment with a fixed CPU per query, scaled per round; records the calls."""

    def __init__(self, cpu_per_query, calls):
        self.cpu, self.calls, self.description = cpu_per_query, calls, "fake"

    def measure(self, workload, factory, n):
        self.calls.append((workload, factory, n))
        drift = 1 + 0.1 * (len(self.calls) // 10)  # the machine slows down as the run goes on
        return self.cpu[factory] * n * drift, 0.001 * n


def test_rounds_interleave_every_client_and_take_ratios_to_the_drivers_tuple_path():
    calls = []
    clients = {"driver": Client({"tuple": 100e-6, "fastpath_named": 80e-6}, calls),
               "ours": Client({"tuple": 70e-6, "fastpath_named": 40e-6}, calls),
               "acsylla": Client({None: 50e-6}, calls)}
    configs = e2e_configs.resolve_all(["fastpath_named", "fastpath_named+conn", "acsylla"], USABLE)
    case = bench_e2e.bench_workload(None, WORKLOADS["coll"], [], 4, 0.01, say=lambda _m: None,
                                    clients=clients, configs=configs)
    res = case["results"]
    assert list(res) == ["tuple", "fastpath_named", "fastpath_named+conn"]  # acsylla does not run coll
    assert res["tuple"]["cpu_ratio"] == 1.0
    assert res["fastpath_named"]["cpu_ratio"] == pytest.approx(0.8, rel=0.15)
    assert res["fastpath_named+conn"]["cpu_ratio"] == pytest.approx(0.4, rel=0.15)
    assert all(len(r["cpu_us_rounds"]) == 4 for r in res.values())
    rounds = [c for c in calls if c[2] == case["queries_per_round"]][-12:]
    assert [f for _, f, _ in rounds[:3]] == ["tuple", "fastpath_named", "fastpath_named"]  # rotated each round
    assert [f for _, f, _ in rounds[3:6]] == ["fastpath_named", "fastpath_named", "tuple"]
    single50 = bench_e2e.bench_workload(None, WORKLOADS["single50"], [], 3, 0.01, say=lambda _m: None,
                                        clients=clients, configs=configs)
    assert single50["results"]["acsylla"]["cpu_ratio"] == pytest.approx(0.5, rel=0.15)


def section_with_connections():
    """A measured section with our connection's rows and a peer that did not run ``pages``."""
    def result(cpu_rounds, base_rounds):
        ratios = sorted(a / b for a, b in zip(cpu_rounds, base_rounds))
        return {"cpu_us_per_query": sorted(cpu_rounds)[1], "qps": 1000.0, "cpu_ratio": ratios[1],
                "qps_ratio": 1.0, "cpu_ratio_range": [ratios[0], ratios[-1]], "qps_ratio_range": [1.0, 1.0],
                "cpu_us_rounds": cpu_rounds, "qps_rounds": [1000.0] * 3}

    base = [100.0, 110.0, 90.0]
    cases = []
    for wid, fast, conn, peer in (("single50", [80.0, 90.0, 70.0], [50.0, 60.5, 54.0], [40.0, 40.0, 40.0]),
                                  ("insert1000", [90.0, 99.0, 81.0], [44.0, 44.0, 44.0], [30.0, 30.0, 30.0]),
                                  ("pages", [70.0, 77.0, 63.0], [71.0, 74.0, 60.0], None)):
        results = {"tuple": result(base, base), "fastpath_named": result(fast, base),
                   "fastpath_named+conn": result(conn, base)}
        if peer:
            results["acsylla"] = result(peer, base)
        w = WORKLOADS[wid]
        cases.append({"id": wid, "description": w.description, "rows": w.rows, "cols": w.cols,
                      "queries_per_round": 100, "results": results})
    configurations = {"tuple": ("tuple", "driver", "LibevConnection"),
                      "fastpath_named": ("fastpath_named", "driver", "LibevConnection"),
                      "fastpath_named+conn": ("fastpath_named", "ours", "TimerQueueLibevConnection"),
                      "acsylla": (None, "acsylla", "acsylla 1.2.0")}
    section = {"depth": "e2e", "cases": cases,
               "config": {"rounds": 21, "client_cpus": [1], "server_cpus": [0], "factories": list(configurations)},
               "cassandra": {"version": "5.0.9", "nodes": 1, "protocol_version": 5},
               "configurations": {n: {"factory": f, "connection": c, "client": d}
                                  for n, (f, c, d) in configurations.items()},
               "notes": ["`acsylla` does not run `pages`"]}
    section["verdicts"] = targets.as_json(targets.end_to_end(section))
    return section


def test_the_connections_targets_are_judged_against_the_same_runs_rounds():
    vs = {(v.case, v.what): v for v in targets.end_to_end(section_with_connections())}
    single50 = vs[("single50", "CPU/query fastpath_named+conn / tuple")]
    assert single50.status == "PASS" and single50.value == pytest.approx(0.55) and single50.target == "<= 0.60x"
    insert = vs[("insert1000", "CPU/query fastpath_named+conn / tuple")]
    assert insert.status == "PASS" and insert.value == pytest.approx(0.44)
    pages = vs[("pages", "CPU/query fastpath_named+conn / fastpath_named")]
    # per round: 71/70, 74/77, 60/63 -> the median is 74/77 (the medians' ratio, 71/70, would miss)
    assert pages.status == "PASS" and pages.value == pytest.approx(74 / 77)
    assert pages.note == "rounds 0.95-1.01"
    unpinned = section_with_connections()
    unpinned["config"]["rounds"] = 5
    assert {v.status for v in targets.end_to_end(unpinned)
            if "+conn" in v.what and targets.REQUEST_PATH not in v.what} == {"~PASS"}


def test_the_request_paths_targets_are_stricter_and_named_apart():
    vs = {(v.case, v.what): v for v in targets.end_to_end(section_with_connections())}
    single50 = vs[("single50", "CPU/query fastpath_named+conn / tuple (request path)")]
    assert single50.status == "MISS" and single50.value == pytest.approx(0.55) and single50.target == "<= 0.50x"
    insert = vs[("insert1000", "CPU/query fastpath_named+conn / tuple (request path)")]
    assert insert.status == "MISS" and insert.target == "<= 0.40x"
    assert vs[("insert1000", "CPU/query fastpath_named+conn / tuple")].status == "PASS"  # the connection's own
    assert vs[("single", "CPU/query fastpath_named+conn / tuple (request path)")].status == "N/A"  # not measured


def test_a_slower_connection_misses_its_targets():
    section = section_with_connections()
    for case in section["cases"]:
        r = case["results"]["fastpath_named+conn"]
        r["cpu_us_rounds"] = [x * 1.5 for x in r["cpu_us_rounds"]]
        r["cpu_ratio"] *= 1.5
    missed = {v.case for v in targets.end_to_end(section) if v.status == "MISS"}
    assert missed == {"single50", "insert1000", "pages"}


def test_tables_name_each_rows_connection_and_the_notes():
    text = bench_e2e.render(section_with_connections())
    lines = text.splitlines()
    conn = [ln for ln in lines if ln.startswith("| fastpath_named+conn ")][0]  # the CPU table's
    cells = [c.strip() for c in conn.strip("|").split("|")]
    assert cells[:3] == ["fastpath_named+conn", "ours", "0.55x (0.50–0.60)"]
    peer = [ln for ln in lines if ln.startswith("| acsylla ")][0]
    peer_cells = [c.strip() for c in peer.strip("|").split("|")]
    assert peer_cells[1] == "acsylla" and peer_cells[-1] == "-"  # not run on pages
    assert "`ours` = TimerQueueLibevConnection" in text and "`acsylla` = acsylla 1.2.0" in text
    assert "Note: `acsylla` does not run `pages`." in text
    assert "PASS e2e pages: CPU/query fastpath_named+conn / fastpath_named" in text
    skipped = section_with_connections()
    skipped["notes"] = ["`acsylla` skipped: acsylla is not importable (No module named 'acsylla')"]
    for case in skipped["cases"]:
        case["results"].pop("acsylla", None)
    skipped["config"]["factories"].remove("acsylla")
    del skipped["configurations"]["acsylla"]
    text = bench_e2e.render(skipped)
    assert "Note: `acsylla` skipped: acsylla is not importable" in text and "| acsylla " not in text


class Flaky(Client):
    """Fails the segments whose call numbers are in ``fail``, as a node that times out some writes."""

    def __init__(self, cpu_per_query, calls, fail):
        super().__init__(cpu_per_query, calls)
        self.fail = fail

    def measure(self, workload, factory, n):
        result = super().measure(workload, factory, n)
        if len(self.calls) in self.fail:
            raise QueriesFailed(f"{workload}/{factory}: 3 of {n} queries failed, the first with WriteTimeout")
        return result


def test_a_round_in_which_the_node_failed_queries_is_measured_again_whole():
    calls = []
    configs = e2e_configs.resolve_all(["fastpath_named+conn"], USABLE)
    # calls: 2 warm-ups, the probe, then rounds of two segments: the second round's second segment fails
    clients = {"driver": Flaky({"tuple": 100e-6}, calls, fail={7}),
               "ours": Client({"fastpath_named": 40e-6}, calls)}
    said = []
    case = bench_e2e.bench_workload(None, WORKLOADS["insert50"], [], 3, 0.01, say=said.append,
                                    clients=clients, configs=configs)
    assert all(len(r["cpu_us_rounds"]) == 3 for r in case["results"].values())  # the failed round's first is dropped
    assert len(calls) == 3 + 2 * 4  # one round measured twice
    assert case["rounds_redone"] == ["round 2: insert50/tuple: 3 of 50 queries failed, the first with WriteTimeout"]
    assert any("round 2 measured again" in m for m in said)
    assert "measured again after the node failed queries: round 2" in bench_e2e.render(
        {**section_with_connections(), "cases": [{**section_with_connections()["cases"][0], **{
            "rounds_redone": case["rounds_redone"]}}]})


def test_a_node_that_keeps_failing_stops_the_run():
    calls = []
    configs = e2e_configs.resolve_all([], USABLE)
    clients = {"driver": Flaky({"tuple": 100e-6}, calls, fail=set(range(3, 100)))}
    with pytest.raises(QueriesFailed, match="WriteTimeout"):
        bench_e2e.bench_workload(None, WORKLOADS["insert50"], [], 3, 0.01, say=lambda _m: None,
                                 clients=clients, configs=configs)
    assert len(calls) == 2 + bench_e2e.ROUND_ATTEMPTS


def test_the_connection_size_measures_what_the_connections_targets_name_pinned():
    spec = bench_e2e.default_spec("connection")
    measured = {(w, c.name) for w in spec["workloads"] for c in bench_e2e.configurations(spec["factories"])
                if c.runs(w)}
    named = {(w, f) for w, f, _ in targets.E2E_TARGETS if "+conn" in f}
    named |= {(w, f) for w, f, against, _ in targets.E2E_PAIRED_TARGETS} | {
        (w, against) for w, _, against, _ in targets.E2E_PAIRED_TARGETS}
    assert named and named <= measured
    assert spec["rounds"] >= 21 and spec.get("reference")
    _, spec = bench_e2e.parse_args(["--size", "connection", "--factories", "fastpath_named+conn"])
    assert names(bench_e2e.configurations(spec["factories"])) == ["tuple", "fastpath_named+conn"]
