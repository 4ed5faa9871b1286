"""Targets (PASS/MISS at the limits), the markdown report and the chart, on hand-made results."""

from benchmarks.reporting import chart, markdown, targets

from . import samples


def _status(verdicts, case, what):
    [v] = [v for v in verdicts if v.case == case and v.what == what]
    return v.status, v.value


def test_factory_targets_pass_on_the_limits():
    res = samples.results()
    vs = targets.factory_only(res["factory_only"])
    assert {v.status for v in vs} == {"PASS"}
    assert _status(vs, "100x10 mixed", "dict / pf_dict") == ("PASS", 2.5)  # exactly the limit
    assert _status(vs, "1x10 mixed", "named_tuple / cached_named_tuple") == ("PASS", 250.0)
    assert _status(vs, "200x10 mixed", "class_row / cached_named_tuple") == ("PASS", 3.0)  # exactly the limit
    assert _status(vs, "200x10 mixed", "dataclass_handwritten / class_row")[0] == "PASS"


def test_dataclass_row_targets_miss_and_say_so():
    vs = targets.factory_only(samples.results(scale={"class_row": 1.01})["factory_only"])
    assert _status(vs, "200x10 mixed", "class_row / cached_named_tuple")[0] == "MISS"
    vs = targets.factory_only(samples.results(scale={"dataclass_handwritten": 0.5})["factory_only"])
    assert _status(vs, "200x10 mixed", "dataclass_handwritten / class_row") == ("MISS", 300_000 * 0.5 / 33_000)


def test_factory_targets_miss_and_say_so():
    res = samples.results(scale={"pf_dict": 1.01, "cached_named_tuple": 1.1})
    vs = targets.factory_only(res["factory_only"])
    assert _status(vs, "1000x10 mixed", "dict / pf_dict")[0] == "MISS"
    assert _status(vs, "100x10 mixed", "cached_named_tuple / copy_tuples")[0] == "MISS"  # 1.2 * 1.1 = 1.32
    text = targets.summary(vs)
    assert "MISS factory 1000x10 mixed: dict / pf_dict" in text
    assert "target(s) MISSED" in text


def test_factory_targets_not_measured():
    vs = targets.factory_only({"cases": []})
    assert {v.status for v in vs} == {"N/A"}


def test_e2e_targets_and_references():
    vs = targets.end_to_end(samples.results()["e2e"])
    assert _status(vs, "single", "CPU/query cached_named_tuple / tuple")[0] == "PASS"
    ref = [v for v in vs if v.status == "REF"]
    assert len(ref) == 4 and all("not a target" in v.note for v in ref)
    # 1.02 exactly passes, just above misses
    vs = targets.end_to_end(samples.results(e2e_scale={"cached_named_tuple": 350 * 1.02 / 355})["e2e"])
    assert _status(vs, "single", "CPU/query cached_named_tuple / tuple")[0] == "PASS"
    vs = targets.end_to_end(samples.results(e2e_scale={"cached_named_tuple": 350 * 1.021 / 355})["e2e"])
    assert _status(vs, "single", "CPU/query cached_named_tuple / tuple")[0] == "MISS"
    assert "MISS e2e single" in targets.summary(vs)


def test_report_has_every_depth_and_the_verdicts():
    text = markdown.render(samples.results(scale={"pf_dict": 1.2}))
    for heading in ("### Factory only", "### Decode only", "### End to end", "### All targets"):
        assert heading in text
    assert "Cassandra 5.0.9" in text and "cassandra-driver 3.30.1" in text
    assert "MISS factory 100x10 mixed: dict / pf_dict" in text
    # the mixed table: 1 row, named / pf_named = 50000 / 200
    [row1] = [ln for ln in text.splitlines() if ln.startswith("| 1    |")]
    assert "250x" in row1 and "50.0 µs" in row1
    # e2e: named_tuple on single = 511 / 350
    assert "1.46x" in text
    assert "scylla-driver 3.29.12" in markdown.render(samples.results(driver="3.29.12", distribution="scylla-driver"))


def test_chart_is_a_png(tmp_path):
    out = chart.draw(samples.results(), tmp_path / "chart.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    partial = samples.results()
    partial["e2e"] = {"depth": "e2e", "skipped": "error: no node", "cases": []}
    assert chart.draw(partial, tmp_path / "partial.png").stat().st_size > 1000
