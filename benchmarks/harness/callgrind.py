"""Instructions counted under callgrind: a steadier measure than CPU time where per-round ratios spread.

Instructions do not depend on what else runs on the machine; they count work, not time (cache
misses and waits are not in them). A run's total is every thread's; the instructions per unit of
work are the difference of two runs' totals over the difference in work (:func:`per_query`), so
what both runs do alike (start-up, connecting, warming up) cancels out.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from typing import Sequence

_TOTALS = re.compile(r"^(?:totals|summary):\s+(\d+)", re.M)


def total(args: Sequence[str], what: str = "the run") -> int:
    """Total instructions (all threads) of ``python <args>`` run under ``valgrind --tool=callgrind``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-line=no",
               sys.executable, *args]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"callgrind run failed ({done.returncode}): {done.stderr[-2000:]}")
        with open(out) as f:
            found = _TOTALS.search(f.read())
    if not found:
        raise RuntimeError(f"no instruction total in the callgrind output of {what}")
    return int(found.group(1))


def per_query(totals: dict[int, int]) -> float:
    """Instructions per query from ``{queries: total}`` of two runs."""
    (n1, t1), (n2, t2) = sorted(totals.items())
    return (t2 - t1) / (n2 - n1)
