"""``index.html``'s first picture: the answer as a chart (inline SVG, no scripts). Per workload, a
panel; in it, per pattern, a horizontal stacked bar per configuration (the driver default, its
``tuple_factory``, everything on), its segments the phases of the client CPU per query in µs, on one
scale per panel, the total and the ratio to the driver default at the bar's end."""

from __future__ import annotations

import html
from typing import Any

from ..timing.instrument import CATEGORIES
from .answer import CONFIGURATIONS, DRIVER_DEFAULT, PHASES, WORKLOADS, chart_data
from .bars import color

LABEL_W, BAR_W, TAIL_W = 330, 560, 150
BAR_H, GAP, PATTERN_GAP, TITLE_H = 18, 4, 14, 26
SHORT = {"named_tuple": "driver default (named_tuple_factory)", "tuple": "driver tuple_factory",
         "everything_on": "everything on: pyfactories.enable(cluster)"}


def _text(x: float, y: float, text: str, **attrs: Any) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{html.escape(text)}</text>'


def panel(kind: str, bars: list[tuple[str, str, dict[str, float], float]]) -> str:
    """One workload's SVG: ``bars`` are (pattern, configuration, phase µs, CPU µs per query)."""
    scale = BAR_W / max(total for *_, total in bars)
    reference = {p: total for p, c, _, total in bars if c == DRIVER_DEFAULT}
    parts, y, pattern = [], TITLE_H, None
    parts.append(_text(0, 17, f"{WORKLOADS[kind]}: client CPU per query (µs), by phase", font_weight="bold",
                       font_size=15))
    for p, config, phases, total in bars:
        if p != pattern:
            y += PATTERN_GAP if pattern is not None else 0
            parts.append(_text(0, y + 12, p, font_weight="bold", font_size=13))
            y, pattern = y + 18, p
        parts.append(_text(LABEL_W - 8, y + BAR_H - 5, SHORT.get(config, CONFIGURATIONS[config]),
                           text_anchor="end", font_size=12))
        x = float(LABEL_W)
        for k in CATEGORIES:
            w = max(0.0, phases.get(k, 0.0)) * scale
            if w > 0:
                parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{BAR_H}" fill="{color(k)}">'
                             f"<title>{html.escape(f'{p} {config} {PHASES[k]}: {phases[k]:.0f} µs/query')}"
                             "</title></rect>")
                x += w
        tail = f"{total:.0f} µs"
        if config != DRIVER_DEFAULT and reference.get(p):
            tail += f"  {total / reference[p]:.2f}x"
        parts.append(_text(x + 6, y + BAR_H - 5, tail, font_size=12))
        y += BAR_H + GAP
    width = LABEL_W + BAR_W + TAIL_W
    return (f'<svg class="answer" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y + 6}" '
            f'viewBox="0 0 {width} {y + 6}" role="img" aria-label="{html.escape(WORKLOADS[kind])}: client CPU per '
            f'query by phase and configuration" font-family="sans-serif">{"".join(parts)}</svg>')


def legend() -> str:
    items = "".join(f'<span class="key"><span class="swatch" style="background:{color(k)}"></span>{PHASES[k]}</span>'
                    for k in CATEGORIES)
    return f'<p class="legend">{items}</p>'


def answer_chart(rows: list[dict[str, Any]]) -> str:
    """The chart's HTML (a panel per workload, the phases' legend), or nothing when no row has shares."""
    data = chart_data(rows)
    panels = []
    for kind in WORKLOADS:
        bars = [(p, c, phases, total) for k, p, c, phases, total in data if k == kind]
        if bars:
            panels.append(panel(kind, bars))
    if not panels:
        return ""
    return f'<div id="answer-chart">{legend()}{"".join(panels)}</div>'
