"""attach/record without a node: the advice rules, the classification of foreign stacks,
the error cases of ``attach``, the sitecustomize chain of ``record``, and index.html's bars."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from profiling.report import advice, bars, summary
from profiling.report.flame import COLORS
from profiling.sampling import foreign
from profiling.sampling.stacks import Stack
from profiling.timing.instrument import CATEGORIES

ROOT = Path(__file__).resolve().parents[2]


def shares(**given):
    out = dict.fromkeys(CATEGORIES, 0.0)
    out.update(given)
    out["other"] += 1 - sum(out.values())
    return out


def row(factory="named_tuple", wall=1.0, cpu=1.0, **given):
    return {"pattern": "p", "workload": "read", "factory": factory, "wall_s": wall, "client_cpu_s": cpu,
            "shares": {"instrumented": shares(**given), "sampled": None}}


def by_category(r, **kw):
    return {a.category: a for a in advice.for_row(r, **kw)}


def test_row_factory_advice_uses_the_cost_ratio_measured_in_the_process():
    r = row(factory="slow_tuple_factory", row_factory=0.4)
    r["factory_costs"] = {"rows": 50, "columns": 7, "current_ns": 2000.0,
                          "replacement_ns": {"cached_named_tuple_factory": 500.0}}
    a = by_category(r)["row_factory"]
    assert a.expected_pts == pytest.approx(0.4 * (1 - 500 / 2000) * 100)
    assert "cached_named_tuple_factory" in a.text and "slow_tuple_factory" in a.text
    assert not a.upper_bound and "measured in the profiled process" in a.basis


def test_row_factory_advice_for_a_registered_factory_measures_the_ratio_here():
    a = by_category(row(factory="named_tuple", row_factory=0.3))["row_factory"]
    ratio = 1 - a.expected_pts / 30
    assert 0 < ratio < 1  # the compiled factory is cheaper, and not free
    assert f"{ratio:.2f}x" in a.basis and "measured here" in a.basis


def test_a_dict_factory_is_replaced_by_ours_of_the_same_row_kind():
    a = by_category(row(factory="dict", row_factory=0.3))["row_factory"]
    assert "pyfactories.dict_factory" in a.change


def test_a_factory_seen_only_from_outside_gives_an_upper_bound():
    a = by_category(row(factory="my_rows (app/rows.py)", row_factory=0.25))["row_factory"]
    assert a.upper_bound and a.expected_pts == pytest.approx(25)
    assert "up to -25 points" in a.text and "`record` measures it" in a.text


@pytest.mark.parametrize("factory", ["cached_named_tuple", "pf_dict", "fastpath_named"])
def test_no_row_factory_advice_for_ours_already(factory):
    assert "row_factory" not in by_category(row(factory=factory, row_factory=0.3))


def test_small_shares_get_no_advice():
    assert advice.for_row(row(row_factory=0.02, deserialization=0.03)) == []


def test_fastpath_advice_from_the_recorded_decode_benchmark(tmp_path):
    results = tmp_path / "results.json"
    case = lambda ident, rows, cols, fast: {"id": ident, "rows": rows, "cols": cols, "results": {  # noqa: E731
        "tuple": {"ns_per_row": 1000.0}, "fastpath_named": {"ns_per_row": fast}}}
    results.write_text(json.dumps({"decode": {"cases": [case("small", 1, 10, 400.0), case("page", 200, 10, 100.0)]}}))
    a = by_category(row(deserialization=0.3), results_path=str(results))["deserialization"]
    assert a.expected_pts == pytest.approx(0.3 * (1 - 400 / 1000) * 100)  # 10 rows: nearer 1 than 200
    assert "pyfactories.enable(cluster" in a.change and "fixture small" in a.basis
    r = row(deserialization=0.3)
    r["shape"] = [150, 10]
    assert by_category(r, results_path=str(results))["deserialization"].expected_pts == pytest.approx(0.3 * 0.9 * 100)


def test_fastpath_advice_without_results_says_it_is_not_measured(tmp_path):
    a = by_category(row(deserialization=0.3), results_path=str(tmp_path / "none.json"))["deserialization"]
    assert a.expected_pts is None and "saving not measured" in a.text


def test_no_fastpath_advice_when_it_is_in_use():
    assert "deserialization" not in by_category(row(factory="fastpath_named", deserialization=0.4))


def test_a_client_mostly_waiting_is_told_first():
    first = advice.for_row(row(wall=10.0, cpu=2.0, row_factory=0.3))[0]
    assert first.category == "waiting" and "0.20 of a core" in first.text
    assert all(a.category != "waiting" for a in advice.for_row(row(wall=1.0, cpu=0.9, row_factory=0.3)))


def test_annotate_puts_the_texts_in_the_rows():
    rows = [row(row_factory=0.3), {**row(), "failed": "boom"}]
    advice.annotate(rows)
    assert rows[0]["advice"][0]["text"].startswith("row factory `named_tuple_factory`: 30% of client CPU")
    assert rows[1]["advice"] == []


# -- classification of a process without markers ---------------------------------------------

LOOP = ["_run_loop (/venv/cassandra/io/libevreactor.py:104)", "handle_read (/venv/cassandra/io/libevreactor.py:370)"]


def stack(frames, thread="event_loop"):
    return Stack(None, "7", thread, frames, 1)


def test_a_python_function_the_driver_calls_is_a_row_factory_by_its_name():
    rule = foreign.FactoryRule()
    inside = stack(LOOP + ["slow_tuple_factory (/app/rows.py:20)", "burn (/app/rows.py:10)"])
    assert foreign.classify(inside, rule) == "row_factory"
    assert foreign.classify(stack(LOOP + ["on_rows (/app/rows.py:20)"]), rule) != "row_factory"
    named = foreign.FactoryRule(foreign.KNOWN_FACTORIES | {"on_rows"})
    assert foreign.classify(stack(LOOP + ["on_rows (/app/rows.py:20)"]), named) == "row_factory"


def test_a_factory_the_user_calls_is_not_the_drivers_row_factory():
    own = stack(["<module> (/app/main.py:3)", "build_factory (/app/main.py:9)"], thread="MainThread")
    assert foreign.classify(own, foreign.FactoryRule()) == "other"


def test_namedtuple_called_by_the_driver_is_its_named_tuple_factory():
    frames = LOOP + ["namedtuple (/usr/lib/python3.11/collections/__init__.py:400)"]
    found = foreign.classify_all([stack(frames)], foreign.FactoryRule())
    assert found.samples.counts()["row_factory"] == 1 and found.factory_ref == "named_tuple"


STDLIB = "/usr/lib/python3.11"


def test_a_callback_the_driver_runs_is_dispatch_with_what_it_calls():
    rule = foreign.FactoryRule()
    # the hand-written asyncio bridge: the callback hands the rows to the loop, waking it
    bridge = LOOP + ["_hand_rows (/srv/app/store.py:150)", f"call_soon_threadsafe ({STDLIB}/asyncio/base_events.py:807)",
                     f"_write_to_self ({STDLIB}/asyncio/selector_events.py:141)"]
    for k in range(len(LOOP) + 1, len(bridge) + 1):
        assert foreign.classify(stack(bridge[:k]), rule) == "dispatch", bridge[:k]
    # the same callback run by pyfactories' connection
    ours = ["_run_loop (/venv/pyfactories/connection/__init__.py:300)", "_hand_rows (/srv/app/store.py:150)"]
    assert foreign.classify(stack(ours), rule) == "dispatch"
    # a callback that sends the next request: that is the request path, as before
    chained = LOOP + ["on_page (/srv/app/pages.py:20)", "push (/venv/cassandra/io/libevreactor.py:390)"]
    assert foreign.classify(stack(chained), rule) == "request"
    # a row factory stays one; the reactor's own work stays socket
    assert foreign.classify(stack(LOOP + ["slow_tuple_factory (/app/rows.py:20)"]), rule) == "row_factory"
    assert foreign.classify(stack(LOOP), rule) == "socket"


def test_what_the_driver_calls_that_is_not_a_callback_keeps_its_category():
    rule = foreign.FactoryRule()
    # the driver's asyncio reactor runs its own loop: the standard library's frames are the reactor's
    reactor = ["_run_loop (/venv/cassandra/io/asyncioreactor.py:130)", f"run_forever ({STDLIB}/asyncio/base_events.py:607)",
               f"_run_once ({STDLIB}/asyncio/base_events.py:1922)"]
    assert foreign.classify(stack(reactor, thread="asyncio_thread"), rule) == "socket"
    # a class of typed rows, built by pyfactories' rows: not a callback
    typed = LOOP + ["class_rows (/venv/pyfactories/rows/_rows_py.py:300)", "__init__ (/srv/app/models.py:5)"]
    assert foreign.classify(stack(typed), rule) == "row_factory"
    # the program's own code on its own thread
    assert foreign.classify(stack(["main (/srv/app/main.py:1)", "handler (/srv/app/store.py:150)"],
                                  thread="MainThread"), rule) == "other"


def test_the_flamegraph_colours_a_callback_as_dispatch():
    frames = LOOP + ["_hand_rows (/srv/app/store.py:150)", f"call_soon_threadsafe ({STDLIB}/asyncio/base_events.py:807)"]
    ((_f, _count, cats),) = foreign.cpu_stacks([stack(frames)], foreign.FactoryRule())
    assert cats[-2:] == ["dispatch", "dispatch"] and cats[1:3] == ["socket", "socket"]


def test_the_flamegraph_colours_the_factory_and_what_it_calls():
    frames = LOOP + ["slow_tuple_factory (/app/rows.py:20)", "burn (/app/rows.py:10)"]
    ((_f, _count, cats),) = foreign.cpu_stacks([stack(frames)], foreign.FactoryRule())
    assert cats[-2:] == ["row_factory", "row_factory"] and cats[0] == "socket"


# -- attach's and record's errors -----------------------------------------------------------------

def attach(*args):
    return subprocess.run([sys.executable, "-m", "profiling", "attach", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_attach_to_a_pid_that_does_not_exist():
    done = attach("--pid", "4194304", "--duration", "1")
    assert done.returncode == 2 and "no process with PID 4194304" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("program", [[sys.executable, "-c", "import time; time.sleep(60)"], ["sleep", "60"]])
def test_attach_to_a_process_without_the_driver(program, tmp_path):
    proc = subprocess.Popen(program)
    try:
        time.sleep(0.5)
        done = attach("--pid", str(proc.pid), "--duration", "1", "--out", str(tmp_path))
    finally:
        proc.kill()
        proc.wait()
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"process {proc.pid}" in done.stderr and "Traceback" not in done.stderr
    assert "does not use the Cassandra driver" in done.stderr or "not a Python process" in done.stderr


def test_record_needs_a_command():
    done = subprocess.run([sys.executable, "-m", "profiling", "record", "--"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "no command" in done.stderr


def test_record_keeps_the_programs_own_sitecustomize_and_exit_code_and_writes_a_prof(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "ran"
    (site / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').write('yes')\n")
    env = {**__import__("os").environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-m", "profiling", "record", "--cprofile", "--out", str(tmp_path / "out"), "--",
                           sys.executable, "-c", "import sys; sys.exit(3)"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 3, done.stdout + done.stderr
    assert marker.read_text() == "yes"
    (only,) = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert only["exit_code"] == 3 and any("no instrumented totals" in w for w in only["warnings"])
    assert (tmp_path / "out" / only["artifacts"]["prof"]).stat().st_size > 0


# -- index.html ---------------------------------------------------------------------------------------

def html_row(factory, **flags):
    r = {"pattern": "sync", "workload": "read", "factory": factory, "ops": 10, "errors": 0,
         "throughput_ops_s": 5.0, "cpu_us_per_op": 3.0, "warnings": [], "artifacts": {},
         "shares": {"instrumented": shares(row_factory=0.5, io=0.25), "sampled": shares(row_factory=0.4)}}
    return {**r, **flags}


def test_index_html_draws_each_methods_shares_as_a_stacked_bar_and_marks_runs(tmp_path):
    rows = [html_row("tuple"), html_row("named_tuple", interrupted=True), html_row("dict", noisy=True)]
    advice.annotate(rows)
    page = Path(summary.write_html(rows, str(tmp_path), {"command": "c"})).read_text()
    assert "<script" not in page
    assert page.count('<svg class="bar"') == 6  # two methods per run
    first = page.split('<svg class="bar"')[1].split("</svg>")[0]
    widths = {c: float(first.split(f'fill="{COLORS[c]}"')[0].rsplit('width="', 1)[1].split('"')[0])
              for c in ("row_factory", "socket")}
    assert widths == {"row_factory": pytest.approx(bars.WIDTH * 0.5), "socket": pytest.approx(bars.WIDTH * 0.25)}
    assert page.count(bars.MARKS["interrupted"]) == 1 and page.count(bars.MARKS["noisy"]) == 1
    assert '<tr class="interrupted">' in page and '<tr class="noisy">' in page and '<tr class="">' in page
    assert "<h2>Advice</h2>" in page and "cached_named_tuple_factory" in page
    markdown = Path(summary.write_markdown(rows, str(tmp_path), {"command": "c"})).read_text()
    assert "## Advice" in markdown and "named_tuple_factory" in markdown


def test_a_window_whose_threads_mostly_waited_for_a_core_is_flagged():
    from profiling.service import results

    ran = {"1": {"name": "event_loop", "ns": 1e9, "sys_ns": 0, "queued_ns": 0.5e9}}
    assert results.overload_note(ran) is None
    starved = {"1": {**ran["1"], "queued_ns": (results.OVERLOAD_RATIO + 1) * 1e9}}
    note = results.overload_note(starved)
    assert note and note.startswith("the machine is overloaded") and "waited 4.0 s" in note


@pytest.mark.parametrize("queued_s, preempted, flagged", [
    (0.5, 200, True),  # 2.5 ms a preemption, half the CPU: time-sliced
    (0.5, 5_000, False),  # 0.1 ms a preemption: woken threads waiting briefly, spread evenly
    (0.2, 50, False),  # long waits, but a fifth of the CPU only
    (2.0, 10_000, False),  # twice the CPU in short waits: measured within 10%
])
def test_a_window_whose_threads_were_time_sliced_is_flagged(queued_s, preempted, flagged):
    from profiling.service import results

    threads = {"1": {"name": "event_loop", "ns": 0.8e9, "sys_ns": 0, "queued_ns": queued_s * 0.8e9 / 0.8,
                     "preempted": preempted * 0.8},
               "2": {"name": "MainThread", "ns": 0.2e9, "sys_ns": 0, "queued_ns": 0, "preempted": preempted * 0.2}}
    note = results.overload_note(threads)
    assert (note is not None) is flagged, note
    if flagged:
        assert note.startswith("the machine is overloaded") and "time-sliced" in note and "ms a preemption" in note


@pytest.mark.parametrize("factory, switch", [("named_tuple", None), ("pf_ordered_dict", None),
                                             ("ordered_dict", "pyfactories.dict_factory"),
                                             ("my_rows (app/rows.py)", "pyfactories.cached_named_tuple_factory")])
def test_fastpath_advice_names_a_factory_it_routes_when_the_one_in_use_is_not(tmp_path, factory, switch):
    a = by_category(row(factory=factory, deserialization=0.3), results_path=str(tmp_path / "none.json"))
    change = a["deserialization"].change
    assert "pyfactories.enable(cluster" in change
    if switch is None:
        assert "session.row_factory" not in change
    else:
        assert change.startswith(f"`session.row_factory = {switch}`, then ")
