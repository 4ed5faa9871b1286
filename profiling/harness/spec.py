"""One run of the harness, typed both ways: what the run's child process (and each pool
worker) is told, and what it measured.

The harness (:mod:`profiling.harness.runner`) makes a :class:`RunSpec` per combination from its
options, sends it to the child as one JSON line, and starts the run's result row from it
(:meth:`RunSpec.record`); the child and the pool workers read it back with
:meth:`RunSpec.from_json`. The child answers with a :class:`Measurement`, which the row
takes its figures from (:meth:`Measurement.record`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .. import node
from ..cluster import Contact
from ..timing import overhead
from .patterns import PATTERNS, Tally
from .workload import Workload


@dataclass(kw_only=True)
class RunSettings:
    """How every run of a session is made; the harness's options extend these."""

    hosts: list[str] = field(default_factory=list)  # empty: the project's local node
    port: int | None = None
    connection_class: str = "libev"  # the reactor
    connection: str = "driver"  # the reactor's connection class: the driver's, or "pyfactories" (ours)
    protocol_version: int | None = None
    num_ops: int = 4000
    threads: int = 1
    concurrency: int = 120
    processes: int = 2
    retries: int = 3
    warmup: int = 200
    request_timeout: float | None = 30.0  # passed with every request; None: no timeout (no timer)
    instrumentation: bool = True  # False: no timed regions at all (and no shares)

    def settings(self) -> dict[str, Any]:
        """These settings alone (not the fields a subclass adds)."""
        return {f.name: getattr(self, f.name) for f in fields(RunSettings)}

    def contact(self) -> Contact:
        """Where the runs connect (the port as ``profiling.cluster.reach`` defaults it)."""
        return Contact(self.hosts, self.port or node.port())


@dataclass(kw_only=True)
class RunSpec(RunSettings):
    """One run: a pattern, a factory and a workload, made with the session's settings."""

    pattern: str
    factory: str
    workload: Workload = field(default_factory=Workload)

    @property
    def multiprocess(self) -> bool:
        return PATTERNS[self.pattern].multiprocess

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> RunSpec:
        data = json.loads(text)
        return cls(**{**data, "workload": Workload(**data["workload"])})

    def record(self) -> dict[str, Any]:
        """The fields of this run that its result row (``summary.json``) starts with."""
        return {"pattern": self.pattern, "factory": self.factory, "workload": self.workload.kind,
                "num_ops": self.num_ops, "threads": self.threads, "concurrency": self.concurrency,
                "processes": self.processes if self.multiprocess else 1,
                "connection_class": self.connection_class, "connection": self.connection,
                "statement": self.workload.statement,
                "num_columns": self.workload.num_columns, "column_type": self.workload.column_type,
                "request_timeout": self.request_timeout,
                "instrumentation": "on" if self.instrumentation else "off"}


@dataclass(frozen=True)
class Measurement:
    ops: int                   # operations that succeeded
    rows: int                  # rows they returned
    errors: int
    retries: int
    error_kinds: dict[str, int]
    first_error: str | None
    wall_s: float
    client_cpu_s: float        # every thread of the client (and of its pool workers)
    interrupted: bool
    processes: int
    loop_threads: int
    instrumented: dict[str, Any]  # the instrumentation's clocks (``instrument.delta``)
    max_rss_mb: float
    region_call_ns: float | None = None  # one timed region's calibrated cost (None: not instrumented)
    interrupted_reason: str | None = None  # why the run stopped early, when its requests failed

    @classmethod
    def of(cls, tally: Tally, instrumented: dict[str, Any], wall_s: float, interrupted: bool,
           max_rss_mb: float, region_call_ns: float | None = None, reason: str | None = None) -> Measurement:
        return cls(ops=tally.ok, rows=tally.rows, errors=tally.errors, retries=tally.retries,
                   error_kinds=dict(tally.error_kinds), first_error=tally.first_error, wall_s=wall_s,
                   client_cpu_s=instrumented["process_ns"] / 1e9, interrupted=interrupted,
                   processes=instrumented.get("processes", 1), loop_threads=instrumented["loop_threads"],
                   instrumented=instrumented, max_rss_mb=max_rss_mb, region_call_ns=region_call_ns,
                   interrupted_reason=reason)

    @property
    def cpu_us_per_op(self) -> float | None:
        done = self.ops + self.errors
        return self.client_cpu_s / done * 1e6 if done else None

    def record(self) -> dict[str, Any]:
        """The figures a result row (``summary.json``) takes from this measurement."""
        row = {k: v for k, v in asdict(self).items() if k != "instrumented"}
        row.update(throughput_ops_s=self.ops / self.wall_s if self.wall_s else 0.0,
                   cpu_us_per_op=self.cpu_us_per_op, instrumented_ns=self.instrumented,
                   instrumentation_cost=overhead.cost(self.instrumented, self.region_call_ns,
                                                      self.ops + self.errors, self.cpu_us_per_op))
        return row
