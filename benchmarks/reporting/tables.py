"""Markdown tables of the reports, and how a figure is written in them."""

from __future__ import annotations

from typing import Any, Iterable, Sequence


def fmt_ns(ns: float | None) -> str:
    """A duration given in nanoseconds, in the unit that keeps 3-4 significant digits."""
    if ns is None:
        return "-"
    if ns < 1_000:
        return f"{ns:.0f} ns" if ns >= 100 else f"{ns:.1f} ns"
    if ns < 1_000_000:
        return f"{ns / 1e3:.3g} µs" if ns < 10_000 else f"{ns / 1e3:.1f} µs"
    return f"{ns / 1e6:.3g} ms" if ns < 10_000_000 else f"{ns / 1e6:.1f} ms"


def fmt_ratio(r: float | None) -> str:
    if r is None:
        return "-"
    if r >= 100:
        return f"{r:.0f}x"
    if r >= 10:
        return f"{r:.1f}x"
    return f"{r:.2f}x"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]], align: Sequence[str] | None = None) -> str:
    """A GitHub markdown table, padded so it also reads well in a terminal."""
    body = [[str(c) for c in row] for row in rows]
    cols = len(header)
    widths = [max([len(str(header[i]))] + [len(r[i]) for r in body]) for i in range(cols)]
    align = list(align) if align else ["l"] + ["r"] * (cols - 1)

    def line(cells: Sequence[str]) -> str:
        out = []
        for i, c in enumerate(cells):
            out.append(c.ljust(widths[i]) if align[i] == "l" else c.rjust(widths[i]))
        return "| " + " | ".join(out) + " |"

    sep = "|" + "|".join(("-" * (widths[i] + 1) + ":") if align[i] == "r" else ("-" * (widths[i] + 2))
                         for i in range(cols)) + "|"
    return "\n".join([line([str(h) for h in header]), sep] + [line(r) for r in body])
