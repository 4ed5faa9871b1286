"""Write the markdown report of a benchmark run (``benchmarks.reporting.markdown``).

    python -m benchmarks.report bench-results/<stamp>/results.json [-o report.md]
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .reporting.markdown import render
from .reporting.results_json import load_json


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.report", description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="a JSON file written by benchmarks.run (or by one bench with --json)")
    ap.add_argument("-o", "--output", help="write the markdown here instead of printing it")
    args = ap.parse_args(argv)
    text = render(load_json(args.results))
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
