"""Reading a recorder once the event loop's thread has closed its regions."""

import time

from profiling.timing import instrument


def settled_delta(rec, before, least: dict, timeout: float = 10.0) -> dict:
    """``instrument.delta(before, rec.snapshot())`` once each region in ``least`` counts at least that many
    calls, or after ``timeout``. The loop's thread counts a region's call when the region ends, after the
    code inside it finished the future a test waited on: a busy machine can run the test's thread first."""
    deadline = time.monotonic() + timeout
    while True:
        d = instrument.delta(before, rec.snapshot())
        if all(d["calls"][region] >= n for region, n in least.items()) or time.monotonic() > deadline:
            return d
        time.sleep(0.01)
