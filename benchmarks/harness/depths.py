"""The benchmark depths, listed once: ``run``, ``report``, ``chart``, ``compare`` and the targets
loop over :data:`DEPTHS`. Adding a depth is one bench module and one entry here.

A bench module offers:

* ``SIZES``: ``{size: settings}``, with at least ``quick`` and ``full``;
* ``default_spec(size)``: the spec of a run of that size;
* ``run(spec, say=print)``, or ``run(spec, contact, say=print)`` for a depth that needs a server
  (``contact``: a ``profiling.cluster.Contact``): the depth's section of the results;
* ``render(section)``: its markdown;
* ``verdicts(section)``: its targets' :class:`benchmarks.reporting.targets.Verdict` (may be empty);
* ``figures(section)``: its comparable :class:`Figure` for ``compare``;
* ``PANELS``: its chart panels (:class:`benchmarks.reporting.chart.Panel`);
* ``main(argv)``: its own command line (``python -m <module>``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable


@dataclass(frozen=True)
class Depth:
    name: str     # on the command line (``run --skip``) and in ``compare``'s tables
    key: str      # the section of the results JSON (and the section's own "depth")
    title: str    # heading of its tables and panels
    server: bool  # needs a Cassandra to talk to
    module: str

    @property
    def bench(self) -> ModuleType:
        return importlib.import_module(self.module)

    def run(self, spec: dict[str, Any], contact: Any = None, say: Callable[[str], None] = print) -> dict[str, Any]:
        """The bench's ``run``: with ``contact`` for a depth that needs a server."""
        if self.server:
            return self.bench.run(spec, contact, say=say)
        return self.bench.run(spec, say=say)


@dataclass(frozen=True)
class Figure:
    """One comparable number of a section: what ``compare`` puts side by side."""
    case: str
    factory: str
    metric: str
    value: Any
    lower_is_better: bool = True
    headline: bool = False  # summed up (geometric mean) for pyfactories' own factories


DEPTHS: tuple[Depth, ...] = (
    Depth("factory", "factory_only", "Factory only", False, "benchmarks.bench_factories"),
    Depth("decode", "decode", "Decode only", False, "benchmarks.bench_decode"),
    Depth("e2e", "e2e", "End to end", True, "benchmarks.bench_e2e"),
)
BY_NAME: dict[str, Depth] = {d.name: d for d in DEPTHS}


def sections(results: dict[str, Any]) -> list[tuple[Depth, dict[str, Any]]]:
    """The depths a results file holds, in registry order, each with its section."""
    return [(d, results[d.key]) for d in DEPTHS if results.get(d.key)]
