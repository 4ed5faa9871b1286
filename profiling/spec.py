"""One run of the harness, typed: what the run's child process and each pool worker are told.

The harness (:mod:`profiling.runner`) makes a :class:`RunSpec` per combination from its
options, sends it to the child as one JSON line, and starts the run's result row from it
(:meth:`RunSpec.record`); the child and the pool workers read it back with
:meth:`RunSpec.from_json`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .patterns import PATTERNS
from .workload import Workload


@dataclass(frozen=True)
class RunSpec:
    pattern: str
    factory: str
    workload: Workload = field(default_factory=Workload)
    hosts: list[str] = field(default_factory=list)
    port: int | None = None
    connection_class: str = "libev"
    protocol_version: int | None = None
    num_ops: int = 10000
    threads: int = 1
    concurrency: int = 120
    processes: int = 2
    retries: int = 3
    warmup: int = 200
    request_timeout: float = 30.0

    @classmethod
    def shared_fields(cls) -> list[str]:
        """The fields a run takes from the session's options as they are (all but what varies per run)."""
        return [f.name for f in fields(cls) if f.name not in ("pattern", "factory", "workload")]

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
                "connection_class": self.connection_class}
