"""The asyncio end-to-end benchmark against the real node (``integration``): a few short rounds of every
configuration, selects (1 and 50 in flight), pages and inserts; the await one reported unavailable
until the futures an enabled session hands out can be awaited."""

import dataclasses

import pytest

from benchmarks import bench_asyncio
from benchmarks.e2e import asyncio_clients
from benchmarks.e2e.workloads import WORKLOADS
from pyfactories import futures

pytestmark = pytest.mark.integration


def test_every_asyncio_configuration_runs_in_the_same_rounds_as_the_bridge(contact):
    spec = {**bench_asyncio.default_spec("tiny"), "rounds": 3, "round_s": 0.01,
            "workloads": ["single", "single50", "pages", "insert1"]}
    section = bench_asyncio.run(spec, contact, say=lambda _msg: None)
    awaitable = hasattr(futures.LeanResponseFuture, "__await__")
    measured = ["driver+bridge", "everything_on+bridge", *(["everything_on+await"] if awaitable else []), "acsylla"]
    assert section["config"]["configs"] == measured
    described = {name: d["client"] for name, d in section["configurations"].items()}
    assert described["driver+bridge"].startswith("LibevConnection; bridge")
    assert described["everything_on+bridge"].startswith(
        "TimerQueueLibevConnection; pyfactories on: connection, rows, binds, futures; bridge")
    assert described["acsylla"].startswith("acsylla 1.2.0")
    if awaitable:
        assert section["notes"] == [] and section["unavailable"] == {}
    else:
        assert list(section["unavailable"]) == ["everything_on+await"]
        assert section["notes"] == [f"`everything_on+await` unavailable: {section['unavailable']['everything_on+await']}"]
        assert "(LeanResponseFuture) cannot be awaited" in section["notes"][0]
    for case in section["cases"]:
        res = case["results"]
        assert list(res) == measured and res["driver+bridge"]["cpu_ratio"] == 1.0
        for r in res.values():
            assert len(r["cpu_us_rounds"]) == 3 and r["cpu_us_per_query"] > 0 and r["qps"] > 0
    assert [c["in_flight"] for c in section["cases"]] == [1, 50, 50, 1]
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in bench_asyncio.render(section).splitlines()
            if ln.startswith("| ")]
    assert ["pages", "50", "everything_on+bridge"] in [r[:3] for r in rows]


def test_the_rows_each_query_returns_are_counted_against_the_workloads(contact):
    client = asyncio_clients.make_client("everything_on+bridge", list(contact.hosts), contact.port)
    try:
        assert client.measure("pages", None, 60)[0] > 0  # 200 rows a page, as the workload says
        WORKLOADS["pages_of_199"] = dataclasses.replace(WORKLOADS["pages"], id="pages_of_199", rows=199)
        with pytest.raises(RuntimeError, match="pages_of_199/everything_on\\+bridge: 12000 rows for 60 queries, "
                                               "expected 11940"):
            client.measure("pages_of_199", None, 60)
    finally:
        WORKLOADS.pop("pages_of_199", None)
        client.close()
