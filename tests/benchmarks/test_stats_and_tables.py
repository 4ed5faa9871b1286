"""Harness, statistics and table arithmetic of the benchmarks (no server, no subprocess)."""

import re

import pytest

from benchmarks import bench_factories
from benchmarks.data import shapes
from benchmarks.harness import stats, timing
from benchmarks.reporting import tables
from profiling.factories import REFERENCE, grouped, offline


def test_summarize_median_and_quartiles():
    s = stats.summarize([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s["n"], s["median"], s["min"], s["max"]) == (5, 3.0, 1.0, 5.0)
    assert (s["q1"], s["q3"]) == (2.0, 4.0)
    assert s["rel_iqr"] == pytest.approx(2.0 / 3.0)
    assert stats.summarize([7.0])["median"] == 7.0
    assert stats.summarize([]) == {"n": 0}


def test_ratios():
    assert stats.ratio(3.0, 2.0) == 1.5
    assert stats.ratio(None, 2.0) is None and stats.ratio(1.0, 0) is None
    # per-round ratios 2, 2, 3: the median is 2 although the ratio of the medians is 4/2
    assert stats.paired_ratio([2.0, 4.0, 6.0], [1.0, 2.0, 2.0]) == 2.0
    assert stats.paired_ratio([], []) is None


@pytest.mark.parametrize("ns, text", [
    (12.34, "12.3 ns"), (123.4, "123 ns"), (1234, "1.23 µs"), (12345, "12.3 µs"), (2_500_000, "2.5 ms"),
    (25_000_000, "25.0 ms"), (None, "-"),
])
def test_fmt_ns(ns, text):
    assert tables.fmt_ns(ns) == text


def test_fmt_ratio():
    assert [tables.fmt_ratio(x) for x in (1.0, 1.234, 12.34, 456.7, None)] == ["1.00x", "1.23x", "12.3x", "457x", "-"]


def test_markdown_table_is_aligned_markdown():
    text = tables.markdown_table(["name", "value"], [["a", "1"], ["longer", "12345"]])
    lines = text.splitlines()
    assert len({len(line) for line in lines}) == 1
    assert lines[1] == "|--------|------:|"
    assert lines[3] == "| longer | 12345 |"


def test_calibrate_reaches_the_target_duration():
    loops = timing.calibrate(lambda a, b: a + b, 1, 2, target_ns=2_000_000)
    assert loops > 100
    ns = min(timing.time_loops(lambda a, b: a + b, 1, 2, loops) for _ in range(5))  # the least disturbed
    assert 200_000 < ns < 50_000_000  # within a wide band on a shared machine


def test_interleaved_samples_rotate_the_order():
    calls = []

    def cell(name):
        return (name, lambda a, b: calls.append(name), None, None)

    samples, loops = timing.interleaved_samples([cell("A"), cell("B"), cell("C")], rounds=3, target_ns=1)
    assert all(len(v) == 3 for v in samples.values()) and set(loops.values()) == {1}
    timed = calls[-9:]  # after the calibration and warm-up calls
    assert timed == ["A", "B", "C", "B", "C", "A", "C", "A", "B"]


def test_copy_baseline_really_allocates():
    colnames, rows = shapes.make_rows(10, 3, "ints")
    lists = [list(r) for r in rows]
    out = bench_factories.copy_tuples(colnames, lists)
    assert out == rows and all(type(t) is tuple and t is not r for t, r in zip(out, rows))


@pytest.mark.parametrize("kind", shapes.KINDS)
def test_shapes_are_deterministic_and_sized(kind):
    colnames, rows = shapes.make_rows(7, 12, kind)
    assert len(colnames) == len(set(colnames)) == 12
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", c) for c in colnames)
    assert len(rows) == 7 and all(type(r) is tuple and len(r) == 12 for r in rows)
    assert shapes.make_rows(7, 12, kind) == (colnames, rows)
    if kind == "ints":
        assert all(type(v) is int for r in rows for v in r)
    if kind == "text":
        assert all(type(v) is str for r in rows for v in r)
    if kind == "mixed":
        assert len({type(v) for r in rows for v in r}) >= 6


def test_factory_only_times_the_registry_and_the_copy_baseline():
    timed = bench_factories.timed_factories()
    names = list(timed)
    # the reading order of the tables: each driver factory, then ours replacing it; the twins last
    assert names == ["tuple", "copy_tuples", "named_tuple", "cached_named_tuple", "dict", "pf_dict", "ordered_dict",
                     "pf_ordered_dict", "dataclass_handwritten", "class_row", "py_cached_named_tuple", "py_dict",
                     "py_ordered_dict", "py_class_row"]
    assert names == bench_factories.order(names)
    assert names[:2] == [REFERENCE, bench_factories.COPY] and timed[bench_factories.COPY] is bench_factories.copy_tuples
    assert [n for n in names if n != bench_factories.COPY] == grouped(offline())
    without_twins = bench_factories.timed_factories(include_python=False)
    assert set(without_twins) == set(offline(include_python=False)) | {bench_factories.COPY}


def test_client_cpu_lists():
    from benchmarks.harness.pinning import parse_cpus

    assert parse_cpus("1") == [1]
    assert parse_cpus("0,1") == [0, 1]
    assert parse_cpus("0-2,5") == [0, 1, 2, 5]
    for bad in ("", "a", "1-", "-1", "1-x", "2-1"):
        with pytest.raises(ValueError):
            parse_cpus(bad)


def test_unpin_also_frees_the_threads_started_while_pinned():
    import os
    import threading

    from benchmarks.harness.pinning import pin, unpin

    before = os.sched_getaffinity(0)
    saved = pin([os.getpid()], [min(before)])
    seen = []
    started, release = threading.Event(), threading.Event()

    def later():
        seen.append(os.sched_getaffinity(0))  # inherited from the pinned thread that started it
        started.set()
        release.wait(10)
        seen.append(os.sched_getaffinity(0))

    thread = threading.Thread(target=later)
    thread.start()
    started.wait(10)
    try:
        unpin(saved, pids=[os.getpid()])
    finally:
        release.set()
        thread.join(10)
    assert seen == [{min(before)}, before] and os.sched_getaffinity(0) == before
