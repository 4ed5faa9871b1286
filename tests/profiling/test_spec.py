"""The typed run spec and measurement: what crosses from the harness to a run's child and back."""

import dataclasses
import json

from profiling.harness.patterns import Tally
from profiling.harness.runner import Options
from profiling.harness.spec import Measurement, RunSettings, RunSpec
from profiling.harness.workload import Workload
from profiling.report import summary


def _options(**changes):
    return Options(patterns=["sync"], factories=["tuple"], kinds=["read", "write"], **changes)


def test_every_shared_field_comes_from_the_options():
    """No field is copied by hand: change each one and it reaches the run."""
    changed = {"hosts": ["10.1.2.3"], "port": 9999, "connection_class": "asyncio", "connection": "pyfactories",
               "protocol_version": 4,
               "num_ops": 7, "threads": 3, "concurrency": 11, "processes": 5, "retries": 9, "warmup": 13,
               "request_timeout": None, "instrumentation": False}
    assert set(changed) == set(RunSettings().settings())
    spec = _options(num_columns=3, column_type="int", rows_per_query=4, keyspace="ks", statement="simple",
                    **changed).spec("write", "multiprocess_execute", "pf_dict")
    assert {k: getattr(spec, k) for k in changed} == changed
    assert spec.workload == Workload("write", 3, "int", 4, "ks", "simple")
    assert (spec.pattern, spec.factory, spec.multiprocess) == ("multiprocess_execute", "pf_dict", True)


def test_the_spec_crosses_to_the_child_unchanged():
    spec = _options(hosts=["127.0.0.1"], port=9042).spec("read", "sync", "cached_named_tuple")
    again = RunSpec.from_json(spec.to_json())
    assert again == spec and isinstance(again.workload, Workload)
    record = spec.record()
    assert record == {"pattern": "sync", "factory": "cached_named_tuple", "workload": "read", "num_ops": 4000,
                      "threads": 1, "concurrency": 120, "processes": 1, "connection_class": "libev",
                      "connection": "driver", "statement": "prepared", "request_timeout": 30.0, "instrumentation": "on",
                      "num_columns": 5, "column_type": "text"}
    pooled = dataclasses.replace(spec, pattern="multiprocess_concurrent", processes=3)
    assert pooled.record()["processes"] == 3


def test_a_measurement_gives_the_rows_figures():
    tally = Tally()
    for _ in range(3):
        tally.success([(1,), (2,)])
    tally.error(TimeoutError("slow"))
    inst = {"process_ns": 8_000_000, "loop_threads": 1, "processes": 1}
    measured = Measurement.of(tally, inst, wall_s=0.5, interrupted=False, max_rss_mb=40.0)
    again = Measurement(**json.loads(json.dumps(dataclasses.asdict(measured))))
    assert again == measured
    row = measured.record()
    assert (row["ops"], row["rows"], row["errors"], row["error_kinds"]) == (3, 6, 1, {"TimeoutError": 1})
    assert row["throughput_ops_s"] == 6.0 and row["cpu_us_per_op"] == 2000.0
    assert row["instrumented_ns"] is inst and "instrumented" not in row
    # what the report reads of a row is there
    row.update(pattern="sync", workload="read", factory="tuple", shares={"instrumented": None, "sampled": None})
    assert summary.one_line(row).startswith("3 ops, 1 errors, 6 ops/s, 2000 µs CPU/op")
    assert "sync" in summary.table([row])
