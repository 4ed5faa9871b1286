"""Small, hand-made results files for the report, target and compare tests (no benchmark runs)."""

from __future__ import annotations

import copy
from typing import Any

from benchmarks.reporting import targets
from profiling.factories import FACTORIES

ENV = {
    "created": "2025-01-01T00:00:00+00:00",
    "machine": {"cpu": "Test CPU", "cpus": 2, "cpus_usable": 2, "mem_total_mb": 4096, "platform": "Linux",
                "loadavg_at_start": [0.5, 0.5, 0.5]},
    "python": {"version": "3.11.7", "implementation": "CPython"},
    "driver": {"distribution": "cassandra-driver", "version": "3.30.1", "cython": True,
               "connection_class": "LibevConnection"},
    "pyfactories": {"version": "0.1.0", "impl": "cython", "fastpath": []},
    "cassandra": {"version": "5.0.9", "nodes": 1, "hosts": ["127.0.0.1"], "protocol_version": 5},
    "git": {"commit": "0" * 40, "dirty": False},
}

# ns per call at 10 mixed columns, per rows: chosen so that every factory-only target passes
FACTORY_NS = {
    1: {"tuple": 40, "copy_tuples": 200, "named_tuple": 50_000, "cached_named_tuple": 200, "dict": 600,
        "pf_dict": 300, "ordered_dict": 1500, "pf_ordered_dict": 700},
    10: {"tuple": 40, "copy_tuples": 600, "named_tuple": 55_000, "cached_named_tuple": 700, "dict": 5_000,
         "pf_dict": 1_800, "ordered_dict": 12_000, "pf_ordered_dict": 5_000},
    100: {"tuple": 40, "copy_tuples": 5_000, "named_tuple": 90_000, "cached_named_tuple": 6_000, "dict": 50_000,
          "pf_dict": 20_000, "ordered_dict": 120_000, "pf_ordered_dict": 50_000},
    200: {"tuple": 40, "copy_tuples": 10_000, "named_tuple": 100_000, "cached_named_tuple": 11_000,
          "dict": 100_000, "pf_dict": 40_000, "ordered_dict": 240_000, "pf_ordered_dict": 100_000,
          "dataclass_handwritten": 300_000, "class_row": 33_000},
    1000: {"tuple": 40, "copy_tuples": 50_000, "named_tuple": 400_000, "cached_named_tuple": 60_000,
           "dict": 500_000, "pf_dict": 200_000, "ordered_dict": 1_200_000, "pf_ordered_dict": 500_000},
    5000: {"tuple": 40, "copy_tuples": 300_000, "named_tuple": 1_500_000, "cached_named_tuple": 330_000,
           "dict": 2_500_000, "pf_dict": 1_000_000, "ordered_dict": 6_000_000, "pf_ordered_dict": 2_500_000},
}

DECODE_NS = {"tuple": 14_000, "named_tuple": 70_000, "cached_named_tuple": 14_500, "dict": 15_000, "pf_dict": 14_400}

E2E_CPU_US = {
    "single": {"tuple": 350, "named_tuple": 511, "dict": 350, "ordered_dict": 360, "cached_named_tuple": 355,
               "pf_dict": 352, "pf_ordered_dict": 356},
    "pages": {"tuple": 600, "named_tuple": 900, "dict": 714, "ordered_dict": 800, "cached_named_tuple": 620,
              "pf_dict": 640, "pf_ordered_dict": 660},
}


def results(scale: dict[str, float] | None = None, e2e_scale: dict[str, float] | None = None,
            driver: str = "3.30.1", distribution: str = "cassandra-driver") -> dict[str, Any]:
    """A combined results file; ``scale`` multiplies a factory's times, ``e2e_scale`` its CPU per query;
    ``distribution`` and ``driver`` say which driver it ran on."""
    scale = scale or {}
    e2e_scale = e2e_scale or {}
    cases = []
    for rows, by_name in FACTORY_NS.items():
        res = {}
        for name, ns in by_name.items():
            v = ns * scale.get(name, 1.0)
            res[name] = {"ns_per_call": v, "ns_per_row": v / rows, "rel_iqr": 0.01, "n": 5, "loops": [1]}
        cases.append({"id": f"{rows}x10 mixed", "rows": rows, "cols": 10, "kind": "mixed", "results": res})
    factory_only = {"depth": "factory_only", "config": {"size": "quick", "processes": 1, "rounds": 5},
                    "cases": cases}
    factory_only["verdicts"] = targets.as_json(targets.factory_only(factory_only))
    dres = {}
    for name, ns in DECODE_NS.items():
        v = ns * scale.get(name, 1.0)
        dres[name] = {"ns_per_call": v, "ns_per_row": v, "rel_iqr": 0.01, "n": 5}
    for r in dres.values():
        r["ratio_to_tuple"] = r["ns_per_call"] / dres["tuple"]["ns_per_call"]
    decode = {"depth": "decode", "config": {"size": "quick", "processes": 1, "rounds": 5}, "fastpath_missing": None,
              "cases": [{"id": "row1_10col", "description": "1 row", "rows": 1, "cols": 10, "results": dres}]}
    e2e_cases = []
    for wid, by_name in E2E_CPU_US.items():
        res = {}
        base = by_name["tuple"] * e2e_scale.get("tuple", 1.0)
        for name, cpu in by_name.items():
            c = cpu * e2e_scale.get(name, 1.0)
            res[name] = {"cpu_us_per_query": c, "qps": 1e6 / c / 2, "cpu_ratio": c / base, "qps_ratio": base / c,
                         "cpu_ratio_range": [c / base, c / base], "cpu_us_rounds": [c] * 5, "qps_rounds": [1e6 / c] * 5}
        rows = 1 if wid == "single" else 200
        e2e_cases.append({"id": wid, "description": wid, "rows": rows, "cols": 10, "in_flight": 1,
                          "queries_per_round": 100, "rounds": 5, "results": res})
    run_order = [f.name for f in FACTORIES if f.name in E2E_CPU_US["single"]]  # as bench_e2e lists them
    # measured in the reference configuration (benchmarks.e2e.reference), so its verdicts are judged
    e2e = {"depth": "e2e", "config": {"size": "full", "rounds": 21, "client_cpus": [1], "server_cpus": [0],
                                      "factories": run_order},
           "cassandra": copy.deepcopy(ENV["cassandra"]), "cases": e2e_cases}
    e2e["verdicts"] = targets.as_json(targets.end_to_end(e2e))
    env = copy.deepcopy(ENV)
    env["driver"].update(distribution=distribution, version=driver)
    out = {"schema": 1, "kind": "pyfactories-bench", "size": "quick", "command": "python -m benchmarks.run --size quick",
           "env": env, "factory_only": factory_only, "decode": decode, "e2e": e2e}
    out["verdicts"] = targets.as_json(targets.all_verdicts(out))
    return out
