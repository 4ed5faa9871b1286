"""The asyncio service's load generator, without a node: its percentiles, the per-position summary and
its table, and the request mix it sends."""

from __future__ import annotations

import json
import math
from collections import Counter

from examples.asyncio_service.figures import Round, as_json, percentile, summarize, table
from examples.asyncio_service.load import MIX, planned_request
from examples.asyncio_service.store import WRITTEN_SENSORS


def test_percentile_is_the_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert [percentile(values, f) for f in (0.5, 0.9, 0.99, 1.0)] == [50.0, 90.0, 99.0, 100.0]
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.51) == 3.0
    assert percentile([7.0], 0.99) == 7.0
    assert percentile(values, 0.001) == 1.0
    assert math.isnan(percentile([], 0.5))


def rounds():
    # the driver+bridge: 100 µs of CPU a request; pyfactories: 50 and 70 in its two rounds
    return [
        Round("off", 4, 0, 2.0, 400_000, [0.001, 0.002, 0.003, 0.004]),
        Round("on", 4, 1, 1.0, 200_000, [0.001, 0.001, 0.001, 0.010]),
        Round("on", 4, 0, 1.0, 280_000, [0.002, 0.002, 0.002, 0.002]),
        Round("off", 4, 0, 2.0, 400_000, [0.005, 0.006, 0.007, 0.008]),
    ]


def test_a_summary_pools_the_rounds_of_a_position():
    off, on = summarize(rounds())
    assert (off.name, on.name) == ("driver+bridge", "pyfactories+await")
    assert (off.rounds, off.requests, off.errors, on.errors) == (2, 8, 0, 1)
    assert off.requests_per_s == 2.0 and on.requests_per_s == 4.0
    assert (off.p50_ms, off.p90_ms, off.p99_ms) == (4.0, 8.0, 8.0)
    assert (on.p50_ms, on.p90_ms, on.p99_ms) == (2.0, 10.0, 10.0)
    assert off.cpu_us_per_request == 100.0 and on.cpu_us_per_request == 60.0
    assert on.cpu_us_range == (50.0, 70.0)
    assert off.cpu_vs_reference == 1.0 and on.cpu_vs_reference == 0.6
    assert on.requests_per_s_vs_reference == 2.0


def test_the_table_has_a_line_per_position_with_its_ratios():
    lines = table(summarize(rounds())).splitlines()
    assert len(lines) == 3 and "vs. driver+bridge" in lines[0]
    assert lines[1].split()[0] == "driver+bridge" and lines[1].split()[-2:] == ["1.00x", "1.00x"]
    assert lines[2].split()[0] == "pyfactories+await" and lines[2].split()[-2:] == ["0.60x", "2.00x"]
    assert "60 (50–70)" in lines[2] and "4.00" in lines[1]  # CPU per request (its rounds), p50 ms
    assert len({len(line) for line in lines}) == 1  # the columns line up


def test_without_the_reference_no_ratio_is_made_up():
    (only,) = summarize([Round("on", 2, 0, 1.0, 100_000, [0.001, 0.002])])
    assert math.isnan(only.cpu_vs_reference)
    assert as_json([only])[0]["cpu_vs_driver_bridge"] is None
    assert table([only]).splitlines()[1].rstrip().endswith("50 (50–50)")
    json.dumps(as_json(summarize(rounds())))  # every figure is plain JSON


def test_the_mix_repeats_every_ten_requests_and_writes_apart_from_what_it_reads():
    kinds = Counter((method, target.count("/"), target.endswith("count")) for method, target, _ in map(
        planned_request, range(100)))
    assert kinds == {("GET", 3, False): 60, ("GET", 2, False): 10, ("GET", 3, True): 10, ("POST", 2, False): 20}
    assert [planned_request(i) for i in range(10)] == [planned_request(i) for i in range(10)]
    posts = [target for method, target, _ in map(planned_request, range(200)) if method == "POST"]
    assert all(int(target.rsplit("/", 1)[1]) >= WRITTEN_SENSORS for target in posts)
    body = json.loads(planned_request(MIX.index("insert"))[2])
    assert set(body) == {"seq", "value", "note"}
