"""Flamegraph SVG and speedscope JSON from classified py-spy samples.

py-spy writes one format per run; the harness records raw stacks once (they
feed the shares) and draws both views from them, so the pictures show exactly
the samples the table counted: idle samples are left out, each stack starts
with its process (multiprocess patterns) and thread, frames are shortened to
``function (package/file.py)`` and, with ``--native``, runs of addresses in
one shared library are merged into ``[library.so]``, since the driver's wheel
is stripped and the library is all that can be named.
"""

from __future__ import annotations

import html
import json
import re
import os
from typing import Any, Iterable

from ..timing.instrument import CATEGORIES

COLORS = {
    "deserialization": "#e4572e", "row_factory": "#f3a712", "encode": "#a8c686",
    "framing": "#2a9d8f", "dispatch": "#8ecae6", "timers": "#c77dff", "request": "#90be6d",
    "socket": "#669bbc", "wait": "#b8b8d1", "other": "#d9d9d9",
}
_PY = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*\.py):\d+\)$")
_NATIVE = re.compile(r"^(?P<func>.*) \((?P<lib>[^()]*)\)$")
_SO_TAG = re.compile(r"\.(cpython|pypy|abi3)[^/]*\.so$")


def short_frame(text: str) -> str:
    m = _PY.match(text)
    if m:
        parts = m["file"].replace("\\", "/").split("/")
        func = m["func"].rsplit(".<locals>.", 1)[-1]
        return f"{func} ({'/'.join(parts[-2:])})"
    m = _NATIVE.match(text)
    if m and not text.startswith(("process ", "thread")):
        lib = "/".join(m["lib"].split("/")[-2:])
        lib = _SO_TAG.sub(".so", lib)
        return f"[{lib}]" if m["func"].startswith("0x") else f"{m['func']} [{lib.split('/')[-1]}]"
    if text.startswith("process "):
        return text.split(":", 1)[0]
    return text


def normalize(frames: list[str], cats: list[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for f, c in zip(frames, cats):
        s = short_frame(f)
        if not (out and s == out[-1][0] and s.startswith("[")):
            out.append((s, c))
    return out


Stacks = Iterable[tuple[list[str], int, list[str]]]


def _tree(stacks: Stacks) -> dict[str, Any]:
    root: dict[str, Any] = {"name": "all", "count": 0, "cat": "other", "children": {}}
    for frames, count, cats in stacks:
        node = root
        node["count"] += count
        for name, cat in normalize(frames, cats):
            node = node["children"].setdefault(name, {"name": name, "count": 0, "cat": cat, "children": {}})
            node["count"] += count
    return root


def write_svg(path: str, stacks: Stacks, title: str) -> None:
    """A static flamegraph, frames colored by category, details in tooltips."""
    root = _tree(stacks)
    total = max(1, root["count"])
    width, row, pad = 1400.0, 17, 40
    min_count = 0.4 * total / width  # narrower frames are not drawn
    height = pad + (_depth(root, min_count) + 1) * row + 10
    rects: list[str] = []

    def place(node: dict[str, Any], x: float, depth: int) -> None:
        w = node["count"] / total * width
        if node["count"] < min_count:
            return
        y = height - 10 - (depth + 1) * row
        cat = node["cat"]
        share = 100.0 * node["count"] / total
        label = html.escape(node["name"])
        text = label[: int(w / 7)] if w > 28 else ""
        rects.append(
            f'<g><title>{label} — {node["count"]} samples ({share:.1f}%), {cat}</title>'
            f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row - 1}" '
            f'fill="{COLORS.get(cat, "#ccc")}" rx="2"/>'
            + (f'<text x="{x + 3:.1f}" y="{y + row - 5}">{text}</text>' if text else "") + "</g>")
        cx = x
        for child in sorted(node["children"].values(), key=lambda c: c["name"]):
            place(child, cx, depth + 1)
            cx += child["count"] / total * width

    place(root, 0.0, 0)
    legend = "".join(
        f'<rect x="{10 + i * 135}" y="22" width="12" height="12" fill="{COLORS[c]}"/>'
        f'<text x="{26 + i * 135}" y="32">{c}</text>' for i, c in enumerate(CATEGORIES))
    body = "\n".join(rects)
    with open(path, "w") as f:
        f.write(
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height}" '
            f'font-family="monospace" font-size="11">\n'
            f'<text x="10" y="15" font-size="13">{html.escape(title)} — {root["count"]} CPU samples '
            f'(hover for details)</text>{legend}\n{body}\n</svg>\n')


def _depth(node: dict[str, Any], min_count: float) -> int:
    """Depth of the deepest frame drawn under ``node`` (0: the node itself)."""
    deeper = [_depth(c, min_count) + 1 for c in node["children"].values() if c["count"] >= min_count]
    return max(deeper, default=0)


def write_speedscope(path: str, stacks: Stacks, title: str) -> None:
    """speedscope's file format: one sampled profile per process/thread."""
    frames: list[dict[str, str]] = []
    index: dict[str, int] = {}
    profiles: dict[str, dict[str, Any]] = {}
    for raw, count, cats in stacks:
        names = [n for n, _c in normalize(raw, cats)]
        key = " ".join(n for n in names[:2] if n.startswith(("process", "thread")))
        prof = profiles.setdefault(key, {"type": "sampled", "name": key or title, "unit": "none",
                                         "startValue": 0, "endValue": 0, "samples": [], "weights": []})
        ids = []
        for n in names:
            if n.startswith(("process", "thread")):
                continue
            if n not in index:
                index[n] = len(frames)
                frames.append({"name": n})
            ids.append(index[n])
        prof["samples"].append(ids)
        prof["weights"].append(count)
        prof["endValue"] += count
    doc = {"$schema": "https://www.speedscope.app/file-format-schema.json", "name": title,
           "exporter": "pyfactories profiling", "activeProfileIndex": 0,
           "shared": {"frames": frames}, "profiles": list(profiles.values())}
    with open(path, "w") as f:
        json.dump(doc, f)


def draw(row: dict[str, Any], cpu: list[tuple[list[str], int, list[str]]], out: str, name: str,
         raw: str, title: str) -> None:
    """The run's flamegraph and speedscope file from its classified samples, named on its row."""
    write_svg(os.path.join(out, f"{name}.svg"), cpu, title)
    write_speedscope(os.path.join(out, f"{name}.speedscope.json"), cpu, title)
    row["artifacts"].update(flamegraph=f"{name}.svg", speedscope=f"{name}.speedscope.json",
                            raw=os.path.basename(raw))
