"""Draw the PNG chart of a benchmark run (``benchmarks.reporting.chart``).

    python -m benchmarks.chart bench-results/<stamp>/results.json [-o chart.png]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from .reporting.chart import draw
from .reporting.results_json import load_json


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.chart", description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("-o", "--output", help="PNG path (default: chart.png next to the results)")
    args = ap.parse_args(argv)
    out = args.output or str(Path(args.results).with_name("chart.png"))
    print(draw(load_json(args.results), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
