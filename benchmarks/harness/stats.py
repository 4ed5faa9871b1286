"""Statistics of benchmark samples: medians and spread, and ratios between figures of one run."""

from __future__ import annotations

import statistics
from typing import Sequence


def summarize(values: Sequence[float]) -> dict[str, float]:
    """Median and spread of a list of samples."""
    vals = sorted(values)
    n = len(vals)
    if n == 0:
        return {"n": 0}
    q = statistics.quantiles(vals, n=4, method="inclusive") if n >= 2 else [vals[0]] * 3
    med = statistics.median(vals)
    return {
        "n": n,
        "median": med,
        "min": vals[0],
        "max": vals[-1],
        "q1": q[0],
        "q3": q[2],
        "rel_iqr": (q[2] - q[0]) / med if med else 0.0,
    }


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def paired_ratio(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Median of per-round ratios a[i]/b[i]: drift between rounds cancels out."""
    pairs = [x / y for x, y in zip(a, b) if y]
    return statistics.median(pairs) if pairs else None


def per_call(samples_ns: Sequence[float], rows: int) -> dict[str, float]:
    """A factory's figures in one case of an offline depth: the median time per call and per row."""
    s = summarize(samples_ns)
    return {"ns_per_call": s["median"], "ns_per_row": s["median"] / rows, "rel_iqr": s["rel_iqr"], "n": s["n"]}
