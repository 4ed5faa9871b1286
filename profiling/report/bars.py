"""``index.html``'s pictures: each run's shares as a stacked bar (inline SVG, no scripts),
one bar per method, coloured by category as the flamegraphs are, and the run's marks
(interrupted, noisy) and advice."""

from __future__ import annotations

import html
import re
from typing import Any

from ..timing.instrument import CATEGORIES
from .flame import COLORS

WIDTH, HEIGHT = 240, 9
_CODE = re.compile(r"`([^`]+)`")
FALLBACK_COLOR = "#999999"
#: Row flags that make a run's figures less trustworthy, and what the mark says.
MARKS = {"interrupted": "interrupted: stopped early, partial figures",
         "failed_repeats": "a repeat failed: figures from the others",
         "noisy": "noisy: CPU/op differs by more than 10% between repeats"}


def color(category: str) -> str:
    return COLORS.get(category, FALLBACK_COLOR)


def stacked_bar(shares: dict[str, float], label: str) -> str:
    """One method's shares as a bar ``WIDTH`` px wide, a tooltip per category."""
    x = 0.0
    parts = []
    for category in CATEGORIES:
        w = max(0.0, shares.get(category, 0.0)) * WIDTH
        if w <= 0:
            continue
        parts.append(f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="{HEIGHT}" fill="{color(category)}">'
                     f"<title>{html.escape(label)} {category}: {shares[category] * 100:.0f}%</title></rect>")
        x += w
    return (f'<svg class="bar" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{html.escape(label)} '
            f'shares">{"".join(parts)}</svg>')


def row_bars(row: dict[str, Any]) -> str:
    """The bars of a row's methods (instrumented, sampled), and its marks."""
    out = []
    for method, shares in (row.get("shares") or {}).items():
        if shares:
            out.append(f'<div class="bars"><span class="method">{method[0]}</span>{stacked_bar(shares, method)}</div>')
    marks = [text for flag, text in MARKS.items() if row.get(flag)]
    out += [f'<div class="mark">{html.escape(m)}</div>' for m in marks]
    return "".join(out)


def row_class(row: dict[str, Any]) -> str:
    return " ".join(flag for flag in MARKS if row.get(flag))


def legend() -> str:
    items = "".join(f'<span class="key"><span class="swatch" style="background:{color(c)}"></span>{c}</span>'
                    for c in CATEGORIES)
    return f'<p class="legend">{items} — bars: i = instrumented, s = sampled</p>'


def advice_html(rows: list[dict[str, Any]]) -> str:
    items = []
    for row in rows:
        name = f"{row.get('workload', '')} {row.get('pattern', '')} {row.get('factory', '')}".strip()
        for a in row.get("advice", []):
            text = _CODE.sub(r"<code>\1</code>", html.escape(a["text"]))
            items.append(f"<li>{html.escape(name) + ': ' if len(rows) > 1 else ''}{text}</li>")
    return f"<h2>Advice</h2><ul>{''.join(items)}</ul>" if items else ""


STYLE = (".bars{display:flex;align-items:center;gap:3px;margin:1px 0} .method{font-size:10px;color:#666;"
         "width:8px} .mark{color:#fff;background:#c0392b;font-size:11px;padding:0 4px;display:inline-block;"
         "border-radius:3px;margin:2px 0} tr.interrupted,tr.failed_repeats,tr.noisy{background:#fdf0ed} .legend{font-size:12px}"
         " .key{margin-right:10px} .swatch{display:inline-block;width:10px;height:10px;margin-right:3px}")
