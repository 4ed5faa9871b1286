"""Capture the RESULT bodies of the decode-only benchmark from a real Cassandra.

    python -m benchmarks.capture [--hosts h1,h2] [--out benchmarks/data/fixtures]

Starts (or reuses) the project's local node unless ``--hosts`` or
``PYFACTORIES_HOSTS`` names a cluster, loads the benchmark data set if it is
missing, captures the body of each query of ``benchmarks.data.fixtures.CAPTURES``
(``benchmarks.data.capture``: executed as a prepared statement, decoded again
before it is saved) and writes the fixture files. A node this script started is
stopped at the end.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from profiling.cluster import connect, reach

from .data import dataset, fixtures
from .data.capture import capture_all


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.capture", description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", help="comma-separated contact points of your own cluster (nothing is started)")
    ap.add_argument("--port", type=int, help="CQL port (default 9042 or PYFACTORIES_PORT)")
    ap.add_argument("--out", default=str(fixtures.HERE), help="directory of the fixture files")
    args = ap.parse_args(argv)

    from cassandra.query import tuple_factory

    with reach(args.hosts, args.port) as contact:
        cluster, session = connect(contact, row_factory=tuple_factory, **dataset.CONNECT_OPTIONS)
        try:
            dataset.ensure_dataset(session)
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            capture_all(session, out, dataset.cassandra_version(session))
        finally:
            cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
