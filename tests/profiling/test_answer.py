"""The answer ``make profile`` prints first, the default set it runs, its progress lines and the page's
chart: on synthetic measurement rows (no node), except the last test, which opens a client of the
everything-on configuration against the real node."""

import re

import pytest

from profiling import factories
from profiling.__main__ import DEFAULT_FACTORIES, DEFAULT_PATTERNS, build_parser, options
from profiling.harness import progress, repeats
from profiling.harness.runner import for_writes
from profiling.report import answer, summary
from profiling.timing.instrument import CATEGORIES


def run(kind, pattern, factory, repeat, cpu, **shares):
    """One measured run: its CPU per query and the shares of the phases named (the rest is other)."""
    full = dict.fromkeys(CATEGORIES, 0.0)
    full.update(shares)
    full["other"] = 1.0 - sum(v for k, v in full.items() if k != "other")
    return {"workload": kind, "pattern": pattern, "factory": factory, "repeat": repeat, "cpu_us_per_op": cpu,
            "wall_s": 1.0, "client_cpu_s": cpu * 1e-3, "throughput_ops_s": 1e6 / cpu,
            "shares": {"instrumented": full, "sampled": None}}


def session(runs):
    return repeats.combine(runs)


DRIVER = {"row_factory": 0.4, "deserialization": 0.1, "timers": 0.1, "request": 0.2, "encode": 0.1}
ALL_ON = {"row_factory": 0.0, "deserialization": 0.1, "timers": 0.05, "request": 0.05, "encode": 0.7}


def synthetic(driver_cpu=(400, 500, 600), on_cpu=(100, 150, 120), patterns=("sync", "callback_full_pipeline")):
    runs = []
    for r, (d, o) in enumerate(zip(driver_cpu, on_cpu), 1):
        for p in patterns:
            runs.append(run("read", p, "named_tuple", r, d, **DRIVER))
            runs.append(run("read", p, "tuple", r, d * 0.6, deserialization=0.2, request=0.3))
            runs.append(run("read", p, "everything_on", r, o, **ALL_ON))
    return session(runs)


def test_the_phase_shares_pool_the_runs_by_their_cpu():
    a = run("read", "sync", "named_tuple", 1, 100, deserialization=0.5)
    b = run("read", "sync", "named_tuple", 2, 300, deserialization=0.1)
    share = answer.shares([a, b])
    assert share["deserialization"] == pytest.approx((50 + 30) / 400)
    assert sum(share.values()) == pytest.approx(1.0)


def test_the_ratio_pairs_each_round_and_sums_over_the_patterns():
    rows = synthetic()
    configs = answer.by_configuration(rows, "read")
    spread = answer.ratio(configs["everything_on"], configs["named_tuple"])
    per_round = [100 / 400, 150 / 500, 120 / 600]  # both patterns alike: the sums' ratio is each's
    assert (spread.low, spread.high, spread.count) == pytest.approx((min(per_round), max(per_round), 3))
    assert spread.median == pytest.approx(sorted(per_round)[1])


def test_a_round_missing_from_one_side_is_left_out_of_the_ratio():
    runs = [run("read", "sync", "named_tuple", 1, 400), run("read", "sync", "everything_on", 1, 100),
            run("read", "sync", "named_tuple", 2, 400)]
    configs = answer.by_configuration(session(runs), "read")
    assert answer.ratio(configs["everything_on"], configs["named_tuple"]).count == 1


def test_one_line_per_finding_across_patterns_with_its_measured_saving():
    rows = synthetic()
    found = answer.findings(rows)
    assert [f.phases for f in found].count(("deserialization", "row_factory")) == 1
    decoding = next(f for f in found if f.phases == ("deserialization", "row_factory"))
    # per pattern and round: driver (0.5 x cpu) - everything on (0.1 x cpu)
    expected = [0.5 * d - 0.1 * o for d, o in zip((400, 500, 600), (100, 150, 120)) for _ in range(2)]
    assert decoding.saving_us.count == 6
    assert (decoding.saving_us.low, decoding.saving_us.high) == pytest.approx((min(expected), max(expected)))
    assert "named rows built while decoding" in decoding.text
    timers = next(f for f in found if f.phases == ("timers",))
    assert "connection class" in timers.text and "timeout=None" not in timers.text
    # encoding costs more with everything on in this data: said as no saving, not as one
    encode = next(f for f in found if f.phases == ("encode",))
    assert "no saving measured" in encode.text
    text = answer.lines(rows)
    assert sum("named rows built while decoding" in line for line in text) == 1


def test_a_phase_under_the_threshold_is_no_finding():
    rows = session([run("read", "sync", "named_tuple", 1, 400, timers=0.01, request=0.5),
                    run("read", "sync", "everything_on", 1, 300, timers=0.01, request=0.5)])
    assert ("timers",) not in [f.phases for f in answer.findings(rows)]


def test_the_waiting_note_is_said_once_whatever_the_number_of_runs():
    runs = [run("read", p, f, r, 400) for p in ("sync", "x") for f in ("named_tuple", "everything_on") for r in (1, 2)]
    for r in runs:
        r["client_cpu_s"] = 0.1  # of a 1 s wall: a tenth of a core
    text = "\n".join(answer.lines(session(runs)))
    assert text.count("mostly waits") == 1 and "8 of 8 runs" in text


def test_the_answer_block_shows_each_configuration_and_the_ratio_with_its_spread():
    text = "\n".join(answer.workload_lines(synthetic(), "read"))
    assert "driver default (named_tuple_factory" in text and "everything on: pyfactories.enable(cluster)" in text
    assert re.search(r"everything on: 0\.2\dx the driver default CPU per query \(0\.20–0\.30 over 3 rounds\)", text)
    assert "row building 40%" in text  # the driver default's largest phase


def test_the_default_set_runs_everything_on_beside_the_drivers_two_for_every_pattern_reads_and_writes():
    o = options(build_parser().parse_args(["run", "--default"]), ["run", "--default"])
    assert o.factories == DEFAULT_FACTORIES and o.repeat >= 3 and not o.cprofile
    combos = set(o.combos())
    for kind in ("read", "write"):
        for pattern in DEFAULT_PATTERNS:
            for config in ("named_tuple", "tuple", "everything_on"):
                assert (kind, pattern, config) in combos
    plan = o.plan()
    assert len(plan) == len(combos) * o.repeat  # rounds interleaved: every combination once per round
    assert [combo for _, combo in plan[:len(combos)]] == [combo for _, combo in plan[len(combos):2 * len(combos)]]


def test_writes_run_a_row_factory_alone_only_once():
    assert for_writes(["cached_named_tuple", "fastpath_named"]) == ["cached_named_tuple"]
    assert for_writes(["tuple", "cached_named_tuple", "everything_on"]) == ["tuple", "everything_on"]


def test_everything_on_is_a_configuration_of_the_whole_client_not_a_row_factory():
    config = factories.resolve("everything_on")
    assert config.whole_client and config not in factories.FACTORIES
    assert "everything_on" not in factories.for_sessions()  # the benchmarks compare row factories only


def test_progress_lines_say_the_time_left():
    assert progress.duration(45) == "45 s" and progress.duration(130) == "2 min 10 s"
    assert progress.duration(3900) == "1 h 5 min"
    assert progress.left([], 5) is None
    assert progress.left([2.0, 4.0], 10, warmups_left=1, warmup_s=6.0) == pytest.approx(36.0)
    ticks = iter([0.0, 3.0, 7.0])
    p = progress.Progress(total=4, workloads=0, clock=lambda: next(ticks))
    assert p.ran(1, "read sync everything_on", {"cpu_us_per_op": 41.2}) == \
        "[1/4] read sync everything_on: 41 µs/query · about 9 s left"
    assert p.ran(2, "read sync tuple", {"failed": "boom"}) == "[2/4] read sync tuple: FAILED: boom · about 7 s left"


def test_the_page_shows_the_chart_before_the_table(tmp_path):
    rows = synthetic()
    for r in rows:
        r.update(ops=100, errors=0, throughput_ops_s=1000.0, artifacts={}, warnings=[])
    path = summary.write_html(rows, str(tmp_path), {"command": "python -m profiling run --default"})
    with open(path) as f:
        page = f.read()
    chart, table = page.index('<div id="answer-chart">'), page.index("<table>")
    assert chart < table
    svg = page[chart:table]
    assert svg.count("<rect") >= 2 * 3 * 2  # 2 patterns x 3 configurations, several phases each
    for config in ("driver default (named_tuple_factory)", "driver tuple_factory", "everything on"):
        assert config in svg
    assert "0.24x" in svg  # everything on's median / the driver default's, on its bar: 120 / 500


@pytest.mark.integration
def test_an_everything_on_client_runs_pyfactories_connection_class(contact):
    from profiling.harness.client import open_client
    from profiling.harness.runner import Options
    from profiling.harness.session import prepare_data
    from pyfactories import connection

    opts = Options(hosts=list(contact.hosts), port=contact.port, keyspace="pyfactories_profile_test",
                   patterns=["sync"], factories=["everything_on"], kinds=["read"])
    prepare_data(opts)
    client = open_client(opts.spec("read", "sync", "everything_on"))
    try:
        assert client.parts() == {"connection": True, "rows": True, "binds": True, "futures": True}
        assert connection.is_ours(client.cluster.connection_class)
    finally:
        client.close()
