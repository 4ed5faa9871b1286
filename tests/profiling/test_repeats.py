"""Repeats (``run --repeat N``) and warm-up, without a server: the round-robin order, medians, spread,
noisy marks, the warm-up check, the reports, the stabilisation rule and the options."""

import json
from pathlib import Path

import pytest

from profiling.__main__ import build_parser, main, options
from profiling.harness import repeats, warmup
from profiling.report import bars, summary
from profiling.timing.instrument import CATEGORIES


def _run(repeat, cpu, ops_s, pattern="sync", factory="tuple", **kw):
    shares = {**dict.fromkeys(CATEGORIES, 0.0), "deserialization": 0.2, "encode": 0.1, "socket": 0.4,
              "wait": 0.1, "other": 0.2}
    row = {"workload": "read", "pattern": pattern, "factory": factory, "ops": 1000, "errors": 0,
           "throughput_ops_s": ops_s, "cpu_us_per_op": cpu, "warnings": [], "repeat": repeat,
           "shares": {"instrumented": {**shares, "row_factory": (cpu or 0) / 1e4}, "sampled": None},
           "artifacts": {"flamegraph": f"{pattern}-r{repeat}.svg"}}
    row.update(kw)
    return row


def test_the_plan_is_round_robin_over_the_combinations():
    combos = [("read", "sync", "tuple"), ("read", "sync", "dict"), ("write", "sync", "tuple")]
    assert repeats.plan(combos, 2) == [(1, combos[0]), (1, combos[1]), (1, combos[2]),
                                       (2, combos[0]), (2, combos[1]), (2, combos[2])]
    assert repeats.plan(combos, 1) == [(1, c) for c in combos]
    with pytest.raises(ValueError, match="--repeat must be at least 1"):
        repeats.plan(combos, 0)


def test_a_combination_shows_medians_spread_and_its_median_run():
    runs = [_run(1, 300.0, 1000.0, artifacts={"flamegraph": "r1.svg", "prof": "r1.prof"}, cprofile_ops=250),
            _run(2, 320.0, 900.0), _run(3, 310.0, 1100.0, artifacts={"flamegraph": "r3.svg"})]
    (row,) = repeats.combine(runs)
    assert row["cpu_us_per_op"] == 310.0 and row["throughput_ops_s"] == 1000.0
    assert row["spread"] == {"cpu_us_per_op": [300.0, 320.0], "throughput_ops_s": [900.0, 1100.0]}
    assert row["median_repeat"] == 3 and "repeat" not in row
    assert row["shares"]["instrumented"]["row_factory"] == pytest.approx(0.031)  # the median run's shares
    assert row["artifacts"] == {"flamegraph": "r3.svg", "prof": "r1.prof"}
    assert row["artifacts_from"] == {"samples": 3, "cprofile": 1} and row["cprofile_ops"] == 250
    assert [r["repeat"] for r in row["repeats"]] == [1, 2, 3]  # every repeat kept, in the order they ran
    assert row["noisy"] is False  # 320 / 300 = 1.067


@pytest.mark.parametrize("high, noisy", [(330.0, False), (330.5, True), (500.0, True)])
def test_noisy_when_cpu_per_op_differs_by_more_than_ten_percent(high, noisy):
    (row,) = repeats.combine([_run(1, 300.0, 1000.0), _run(2, high, 1000.0)])
    assert row["noisy"] is noisy
    assert repeats.figure(row, "cpu_us_per_op").endswith(repeats.NOISY_MARK) is noisy


def test_failed_and_interrupted_repeats_stay_out_of_the_figures_but_mark_the_row(tmp_path):
    stopped = "requests failing: 40 errors and no success for 5 s (NoHostAvailable: 40)"
    runs = [_run(1, 300.0, 1000.0), _run(2, None, 0.0, failed="ChildEnded: gone"),
            _run(3, 150.0, 400.0, interrupted=True, interrupted_reason=stopped), _run(4, 310.0, 990.0)]
    (row,) = repeats.combine(runs)
    # the complete repeats only: the partial one (150) would be the median and make the row noisy
    assert row["cpu_us_per_op"] == 305.0 and row["spread"]["cpu_us_per_op"] == [300.0, 310.0]
    assert row["throughput_ops_s"] == 995.0 and row["noisy"] is False and row["median_repeat"] == 1
    # what happened to the others is on the row, though its median run is a complete one
    assert row["interrupted"] and row["interrupted_reason"] == stopped and row["failed_repeats"] == [2]
    assert "repeat 2 failed: ChildEnded: gone" in row["warnings"]
    assert summary.table([row]).splitlines()[2].split()[3] == "1000*"
    page = Path(summary.write_html([row], str(tmp_path), {"command": "x"})).read_text()
    assert bars.MARKS["failed_repeats"] in page and bars.MARKS["interrupted"] in page
    assert "| 300 (1000) | FAILED | 150 (400)* | 310 (990) | 1 |" in summary.markdown([row])
    (failed,) = repeats.combine([_run(1, 300.0, 1000.0), _run(2, 320.0, 900.0), _run(3, None, 0.0, failed="x")])
    assert failed["failed_repeats"] == [3] and not failed.get("interrupted") and "failed" not in failed
    assert summary.table([failed]).splitlines()[2].split()[3] == "1000*"


def test_partial_figures_only_when_no_repeat_completed():
    runs = [_run(1, 300.0, 1000.0, interrupted=True, interrupted_reason="SIGINT (Ctrl-C)"),
            _run(2, 340.0, 800.0, interrupted=True, interrupted_reason="SIGTERM")]
    (row,) = repeats.combine(runs)
    assert row["cpu_us_per_op"] == 320.0 and row["spread"]["cpu_us_per_op"] == [300.0, 340.0]
    assert row["interrupted"] and row["interrupted_reason"] == "SIGINT (Ctrl-C)" and row["noisy"]
    (dead,) = repeats.combine([_run(1, None, 0.0, failed="x"), _run(2, None, 0.0, failed="y")])
    assert dead["failed"] == "x" and dead["noisy"] is False and len(dead["repeats"]) == 2


def test_a_single_run_keeps_its_shape():
    (row,) = repeats.combine([_run(1, 393.4, 1291.2)])
    assert row["noisy"] is False and "repeats" not in row and "spread" not in row
    assert repeats.figure(row, "cpu_us_per_op") == "393" and repeats.figure(row, "throughput_ops_s") == "1291"
    assert repeats.legend([row]) == "" and repeats.markdown([row]) == ""


def test_the_warm_up_check_compares_the_first_run_with_the_same_run_at_the_end():
    runs = [_run(1, 400.0, 900.0), _run(1, 300.0, 1000.0, factory="dict"), _run(2, 350.0, 950.0),
            _run(2, 310.0, 990.0, factory="dict"), _run(repeats.CHECK, 320.0, 1000.0)]
    rows = repeats.combine(runs)
    assert [len(r["repeats"]) for r in rows] == [2, 2]  # the check is not a repeat
    check = rows[0]["warmup_check"]
    assert check["first_cpu_us_per_op"] == 400.0 and check["end_cpu_us_per_op"] == 320.0
    assert check["change"] == pytest.approx(0.25)
    line = repeats.check_line(rows)
    assert "read sync tuple read 400 µs CPU/op (900 ops/s) when it ran first" in line and "+25.0%" in line
    assert "warmup_check" not in rows[1]


def test_reports_show_medians_ranges_marks_and_every_repeat(tmp_path):
    rows = repeats.combine([_run(1, 300.0, 1000.0), _run(1, 200.0, 2000.0, pattern="callback_full_pipeline"),
                            _run(2, 400.0, 800.0), _run(2, 205.0, 1900.0, pattern="callback_full_pipeline")])
    text = summary.table(rows)
    assert "350 (300–400)!" in text and "900 (800–1000)" in text and "202 (200–205)" in text
    assert "median of 2 repeats (min–max)" in text and "! = CPU µs/op differs by more than 10%" in text
    meta = {"command": "python -m profiling run --repeat 2"}
    md = Path(summary.write_markdown(rows, str(tmp_path), meta)).read_text()
    assert "| read | sync | tuple | 300 (1000) | 400 (800) | 1 |" in md
    page = Path(summary.write_html(rows, str(tmp_path), meta)).read_text()
    assert "350 (300–400)!" in page
    saved = json.loads(Path(summary.write_json(rows, str(tmp_path))).read_text())
    assert saved[0]["noisy"] is True and [r["cpu_us_per_op"] for r in saved[0]["repeats"]] == [300.0, 400.0]


# -- warm-up --------------------------------------------------------------------------------

def test_steady_means_the_throughput_stopped_climbing():
    assert not warmup.steady([100, 100, 100, 100, 100])  # too few windows to tell
    assert warmup.steady([100, 100, 100, 100, 100, 100])
    assert warmup.steady([100, 130, 80, 110, 90, 100])  # noise around a level
    assert not warmup.steady([100, 110, 120, 130, 140, 150])  # still climbing
    assert warmup.steady([900, 1000, 1100, 1000, 1000, 1000])  # done climbing


class FakeLoad:
    """``window(seconds)`` on a fake clock: each window takes ``seconds``; throughput follows ``rates``
    and stays at the last one."""

    def __init__(self, rates):
        self.rates, self.now, self.calls = list(rates), 0.0, 0

    def clock(self):
        return self.now

    def window(self, seconds):
        rate = self.rates[min(self.calls, len(self.rates) - 1)]
        self.calls += 1
        self.now += seconds
        return int(rate * seconds)


def test_until_stable_waits_out_the_climb_and_the_minimum():
    ramp = FakeLoad([100, 200, 400, 800, 1200, 1500, 1600, 1600, 1600, 1600])
    done = warmup.until_stable(ramp.window, min_s=1.0, max_s=30.0, clock=ramp.clock)
    # the last three windows' median reaches the three before it at the 11th window of 0.5 s
    assert done.steady and done.rates[-1] == 1600 and done.seconds == pytest.approx(5.5)
    flat = FakeLoad([1000])
    assert warmup.until_stable(flat.window, min_s=5.0, max_s=30.0, clock=flat.clock).seconds == pytest.approx(5.0)
    assert warmup.until_stable(flat.window, min_s=0.0, max_s=30.0, clock=flat.clock).seconds == pytest.approx(3.0)


def test_until_stable_gives_up_at_its_maximum_or_when_cancelled():
    climbing = FakeLoad([100 * k for k in range(1, 1000)])
    done = warmup.until_stable(climbing.window, min_s=1.0, max_s=4.0, clock=climbing.clock)
    assert not done.steady and done.seconds == pytest.approx(4.0) and "still climbing after 4 s" in done.describe()
    stopped = FakeLoad([100 * k for k in range(1, 1000)])
    calls = iter(range(100))
    done = warmup.until_stable(stopped.window, 1.0, 30.0, clock=stopped.clock, cancelled=lambda: next(calls) >= 2)
    assert len(done.rates) == 3
    with pytest.raises(ValueError, match="warm-up bounds"):
        warmup.until_stable(stopped.window, 5.0, 1.0)


def _opts(*argv):
    return options(build_parser().parse_args(["run", *argv]), ["run", *argv])


def test_repeat_and_warm_up_options():
    o = _opts("--default")  # three interleaved rounds: the ratios' spread and the first run's check
    assert (o.repeat, o.warmup_s, o.warmup_max_s, o.warmup, o.recheck_first) == (3, 5.0, 30.0, 500, False)
    assert _opts("--default", "--repeat", "1").repeat == 1 and _opts("--pattern", "sync").repeat == 1
    o = _opts("--repeat", "3", "--node-warmup", "0", "--client-warmup", "50", "--recheck-first")
    assert (o.repeat, o.warmup_s, o.warmup, o.recheck_first) == (3, 0.0, 50, True)
    assert warmup.settings(o) == {"warm-up": "node: none; client 50 ops of the run's pattern",
                                  "repeats": "3, round-robin"}


def test_the_first_run_is_checked_against_its_later_rounds():
    def run(repeat, cpu):
        return {"workload": "read", "pattern": "sync", "factory": "tuple", "repeat": repeat, "cpu_us_per_op": cpu,
                "throughput_ops_s": 1.0}

    assert "no warm-up artefact" in repeats.first_round_line(repeats.combine([run(1, 100), run(2, 90), run(3, 110)]))
    assert "+50% above them" in repeats.first_round_line(repeats.combine([run(1, 150), run(2, 90), run(3, 100)]))
    assert repeats.first_round_line(repeats.combine([run(1, 150)])) == ""


@pytest.mark.parametrize("argv, message", [
    (["--repeat", "0"], "--repeat must be at least 1"),
    (["--node-warmup", "-1"], "--node-warmup must not be negative"),
    (["--client-warmup", "-5"], "--client-warmup must not be negative"),
])
def test_bad_repeat_and_warm_up_options_are_refused(argv, message, capsys):
    assert main(["run", *argv]) == 2
    assert message in capsys.readouterr().err


def test_the_session_warm_up_can_be_skipped_and_its_failure_is_reported(monkeypatch, capsys):
    o = _opts("--node-warmup", "0")
    assert warmup.session_warm_up(o, "read", lambda: False) == {"skipped": True}

    def unreachable(*_args, **_kw):
        raise OSError("no route to host")

    monkeypatch.setattr(warmup, "warm_node", unreachable)
    o = _opts("--node-warmup", "2")
    assert warmup.session_warm_up(o, "write", lambda: False) == {"failed": "OSError: no route to host"}
    assert "warm-up failed: OSError: no route to host" in capsys.readouterr().out
