"""What changed between two benchmark runs (``benchmarks.reporting.compare``).

    python -m benchmarks.compare OLD.json NEW.json [--threshold 5] [--all]
    python -m benchmarks.compare profiles/OLD/summary.json profiles/NEW/summary.json

Files written by ``benchmarks.run`` or by one bench's ``--json``, or two profiler summaries
(``python -m profiling run``'s ``summary.json``). Prints what differs in the environment, every
figure that moved by more than the threshold (in percent, default 5), a geometric-mean summary per
depth for pyfactories' own factories, and any target whose verdict changed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .reporting.compare import compare, load


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.compare", description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--threshold", type=float, default=5.0, help="percent change to report (default 5)")
    ap.add_argument("--all", action="store_true", help="list every figure, moved or not")
    args = ap.parse_args(argv)
    print(compare(load(args.old), load(args.new), args.threshold, args.all))
    return 0


if __name__ == "__main__":
    sys.exit(main())
