"""Benchmarks of pyfactories against the driver's row factories, at several depths.

The depths are listed once, in :mod:`benchmarks.harness.depths`; today:

* ``python -m benchmarks.bench_factories``: the factory alone, on synthetic rows
  (no server);
* ``python -m benchmarks.bench_decode``: the driver's protocol handler decoding
  captured RESULT bodies, then each row factory (no network in the timed region);
* ``python -m benchmarks.bench_e2e``: real queries against Cassandra, client CPU
  per query and throughput;
* ``python -m benchmarks.run --size quick|full``: every depth, JSON + markdown + PNG;
* ``python -m benchmarks.compare old.json new.json``: what changed.

Every comparison is made inside one run: the factories take turns round by
round and the figures are medians, reported as ratios to a reference measured
in the same run (``tuple_factory`` unless a table says otherwise). The
factories, their order, labels and colours all come from ``profiling.factories``.
"""

from pathlib import Path

#: The checkout the benchmarks run from (worker processes start there; results go below it).
REPO_ROOT = Path(__file__).resolve().parents[1]
