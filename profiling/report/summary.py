"""The summary: terminal table, markdown, ``summary.json`` and ``index.html``."""

from __future__ import annotations

import html
import json
import os
import re
from typing import Any

from ..harness import repeats
from ..timing.instrument import CATEGORIES
from ..timing.overhead import METHOD as COST_METHOD
from ..timing.overhead import describe as describe_cost
from . import answer, bars
from .advice import lines as advice_lines
from .chart import answer_chart

METHODS = {
    "instrumented": (
        "thread CPU clocks (time.thread_time_ns, user and kernel) around the protocol handler's "
        "decode_message (deserialization), encode_message plus statement binding (encode), the row "
        "factory (row_factory), the connection's process_io_buffer and segment encoding (framing), its "
        "process_msg (dispatch), the connection class's create_timer and the reactor's timer heap "
        "service (timers), Session.execute_async (request) and the pattern's blocking calls (wait), "
        "each exclusive of the regions nested in it; socket = CPU of the driver's event-loop thread "
        "outside those regions; other = the rest of the client processes' CPU"),
    "sampled": (
        "py-spy raw stacks of every thread (and worker process), samples of blocked threads dropped, "
        "each sample classified by its innermost region frame (the same wrappers; a wrapper's own lines "
        "outside its clock readings belong to the enclosing category, a reading half to each side; a stack "
        "py-spy cut short takes the categories its function has in complete stacks), else socket on the "
        "event-loop thread and other elsewhere; each thread's user CPU (kernel accounting) split by its "
        "own samples outside system calls; its kernel CPU (invisible to Python stacks): one sampling "
        "interval for each sample inside a system call, in its category (not at wake sites, a send or a "
        "release, where a thread is preempted by the one it woke), the rest (faults, interrupts, sleeps) "
        "spread over the thread's active samples, those at a sleeping line to socket on the event-loop "
        "thread and to wait elsewhere"),
}
SHORT = {"deserialization": "deser", "row_factory": "rows", "encode": "enc", "framing": "frame",
         "dispatch": "disp", "timers": "timer", "request": "req", "socket": "sock", "wait": "wait",
         "other": "other"}
def agreement(shares: dict[str, Any]) -> float | None:
    """Largest difference between the two methods, in percentage points."""
    a, b = shares.get("instrumented"), shares.get("sampled")
    if not a or not b:
        return None
    return max(abs(a[k] - b[k]) for k in CATEGORIES) * 100


METHODS["instrumentation cost"] = COST_METHOD


def costs(rows: list[dict[str, Any]]) -> list[str]:
    """One line per run: what the instrumentation itself cost per query."""
    return [f"{r['workload']} {r['pattern']} {r['factory']}: {describe_cost(r)}" for r in rows if not r.get("failed")]


def cost_line(rows: list[dict[str, Any]]) -> str:
    """The instrumentation's own cost over all rows in one line (each row's: :func:`costs`; a single
    row's, or that it was off, as :func:`costs` says it)."""
    measured = [r for r in rows if not r.get("failed")]
    known = [c for r in measured if (c := r.get("instrumentation_cost"))]
    if len(measured) <= 1 or not known:
        return costs(measured[:1])[0] if measured else ""
    us = [c["us_per_query"] for c in known]
    share = [c["share_of_cpu"] for c in known if c.get("share_of_cpu") is not None]
    of_cpu = f" = {min(share) * 100:.0f}–{max(share) * 100:.0f}% of CPU per query" if share else ""
    return (f"instrumentation's own cost: at least {min(us):.0f}–{max(us):.0f} µs/query{of_cpu}, included in every "
            "figure above (so ratios to the driver are conservative; each row's in summary.md)")


def warnings(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Each distinct warning once (those that differ only in their numbers are one, said with N), with
    the rows that have it."""
    out: dict[str, list[str]] = {}
    said: dict[str, str] = {}
    for row in rows:
        for w in row.get("warnings", []):
            shape = _NUMBER.sub("N", w)
            said[shape] = w if said.get(shape, w) == w else shape
            out.setdefault(shape, []).append(f"{row['workload']} {row['pattern']} {row['factory']}")
    return {said[w]: names[0] if len(names) == 1 else f"{len(set(names))} rows" for w, names in out.items()}


_NUMBER = re.compile(r"\d+(\.\d+)?")


def note_samples(row: dict[str, Any], samples: Any, rate: int, longer: str) -> None:
    """The sampled method's counts on the row, the two methods' gap, and a warning when too few
    samples were busy for the shares to hold (``longer``: how to get more)."""
    row["samples"] = {"busy": samples.busy, "idle": samples.idle, "rate_hz": rate, "counts": samples.counts()}
    row["agreement_pts"] = agreement(row["shares"])
    if samples.busy < 200:
        row["warnings"].append(f"only {samples.busy} CPU samples: the sampled shares are rough ({longer})")


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.0f}"


def _cells(row: dict[str, Any]) -> list[str]:
    shares = row.get("shares") or {}
    inst, samp = shares.get("instrumented"), shares.get("sampled")
    if row.get("failed"):
        return [row["pattern"], row["workload"], row["factory"], "FAILED", "", "", ""] + [""] * (len(CATEGORIES) + 1)
    cats = [f"{_pct(inst[k] if inst else None)}/{_pct(samp[k] if samp else None)}" for k in CATEGORIES]
    agree = row.get("agreement_pts")
    return [
        row["pattern"], row["workload"], row["factory"],
        f"{row['ops']}{'*' if row.get('interrupted') or row.get('failed_repeats') else ''}", str(row["errors"]),
        repeats.figure(row, "throughput_ops_s"), repeats.figure(row, "cpu_us_per_op"),
        *cats, "-" if agree is None else f"{agree:.1f}",
    ]


HEADER = ["pattern", "load", "factory", "ops", "errors", "ops/s", "CPU µs/op",
          *(SHORT[k] for k in CATEGORIES), "Δmax pts"]
LEGEND = ("shares of client CPU in %, instrumented/sampled: deser = deserialization, rows = row "
          "factory, enc = encode, frame = framing, disp = dispatch, req = request path, sock = socket; "
          "Δmax = largest gap between the two methods in points; * = interrupted run (or a repeat of it interrupted or failed)")


def table(rows: list[dict[str, Any]]) -> str:
    body = [_cells(r) for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(HEADER)]
    line = lambda cells: "  ".join(c.rjust(w) if i > 2 else c.ljust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(HEADER), line(["-" * w for w in widths]), *map(line, body),
                      LEGEND + repeats.legend(rows)])


def markdown(rows: list[dict[str, Any]]) -> str:
    out = ["| " + " | ".join(HEADER) + " |", "|" + "|".join("---" if i < 3 else "--:"
                                                           for i in range(len(HEADER))) + "|"]
    out += ["| " + " | ".join(_cells(r)) + " |" for r in rows]
    first = repeats.first_round_line(rows)
    return ("\n".join(out) + f"\n\n{LEGEND}{repeats.legend(rows)}.\n" + repeats.markdown(rows)
            + (f"\n{first}.\n" if first else ""))


def one_line(row: dict[str, Any]) -> str:
    if row.get("failed"):
        return f"FAILED: {row['failed']}"
    c = _cells(row)
    parts = [f"{c[3]} ops, {c[4]} errors, {c[5]} ops/s, {c[6]} µs CPU/op"]
    parts += [f"{SHORT[k]} {v}" for k, v in zip(CATEGORIES, c[7:7 + len(CATEGORIES)])]
    parts.append(f"Δmax {c[-1]}")
    for w in row.get("warnings", []):
        if "errors" in w:
            parts.append(f"({w})")
    parts.append(describe_cost(row))
    return ", ".join(parts)


def write_json(rows: list[dict[str, Any]], out: str) -> str:
    path = os.path.join(out, "summary.json")
    with open(path + ".tmp", "w") as f:
        json.dump(rows, f, indent=1)
    os.replace(path + ".tmp", path)
    return path


def write_markdown(rows: list[dict[str, Any]], out: str, meta: dict[str, Any]) -> str:
    path = os.path.join(out, "summary.md")
    with open(path, "w") as f:
        f.write(f"# Client CPU profile\n\n`{meta['command']}`\n\n{_meta_line(meta)}\n\n")
        first = answer.lines(rows)
        if first:
            f.write("## The answer\n\n```\n" + "\n".join(first) + "\n```\n\n## The details\n\n")
        f.write(markdown(rows))
        f.write("\nInstrumentation's own cost:\n\n" + "".join(f"- {line}\n" for line in costs(rows)))
        tips = advice_lines(rows)
        if tips:
            f.write("\n## Advice\n\n" + "".join(f"- {t}\n" for t in tips))
        f.write("\nMethods:\n\n" + "".join(f"- **{k}**: {v}.\n" for k, v in METHODS.items()))
    return path


def _meta_line(meta: dict[str, Any]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in meta.items() if k != "command")


READING = """
<h2>How to read it</h2>
<p>Each column is a share of the client's CPU, with what you can do about it:</p>
<ul>
<li><b>deser</b>: the driver decoding responses (rows included, in its compiled <code>protocol</code>/
<code>row_parser</code>/<code>obj_parser</code>/<code>deserializers</code> modules): fewer or narrower
columns, or the fast path.</li>
<li><b>rows</b>: the row factory turning decoded values into your row objects: a cheaper factory.</li>
<li><b>enc</b>: binding values and encoding request messages: prepared statements, fewer values.</li>
<li><b>frame</b>: protocol framing: cutting the bytes read into frames and, with protocol v5, into
segments with their checksums (a CRC24 of each segment header, computed in Python by the driver, and a
CRC32 of its payload) both ways: protocol v4 (<code>protocol_version=4</code>) has no segments.</li>
<li><b>disp</b>: dispatch of each response: stream-id lookup, completing the future, its locks, waking the
thread waiting on it and running the callbacks chained on it (your callback code counts here).</li>
<li><b>timer</b>: request timeouts: a timer per request, the reactor's timer heap and the wake-up of its
loop; <code>timeout=None</code> (or a profile's <code>request_timeout=None</code>) removes it.</li>
<li><b>req</b>: the request path in <code>Session.execute_async</code>: routing, query plan, building the
future and the message, handing it to a connection; batching statements or fewer, larger requests.</li>
<li><b>sock</b>: the event-loop thread outside all of the above: the reactor and its socket calls,
mostly kernel time in <code>send</code>/<code>recv</code>; fewer round trips, or more processes.</li>
<li><b>wait</b>: CPU spent inside blocking calls (waking up costs CPU); <b>other</b>: everything else in
the client, your own code included.</li>
</ul>
<p>Framing, dispatch, deserialization and the socket all run on the one event-loop thread: when they add
up to most of it, a single client is CPU-bound in that thread (the GIL lets one thread run Python at a
time), which is why callback chains beat sync calls and why several processes beat one.
A flamegraph's width is CPU samples: blocked threads are left out. cProfile files (<code>.prof</code>,
open with <code>snakeviz</code>) only see Python functions of the threads it profiles (the main thread on
Python 3.11) and none of the driver's compiled code; use them for call counts of your own code.</p>
"""


def _answer_html(rows: list[dict[str, Any]]) -> str:
    first = answer.lines(rows)
    return f'<pre class="answer">{html.escape(chr(10).join(first))}</pre>' if first else ""


def write_html(rows: list[dict[str, Any]], out: str, meta: dict[str, Any]) -> str:
    path = os.path.join(out, "index.html")
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADER + ["shares and files"])
    body = []
    for row in rows:
        a = row.get("artifacts", {})
        links = " ".join(f'<a href="{html.escape(a[k])}">{label}</a>' for k, label in
                         (("flamegraph", "flamegraph"), ("speedscope", "speedscope"), ("prof", ".prof"),
                          ("raw", "raw")) if k in a)
        cells = "".join(f"<td>{html.escape(c)}</td>" for c in _cells(row))
        warn = "".join(f'<div class="warn">{html.escape(w)}</div>' for w in row.get("warnings", []))
        body.append(f'<tr class="{bars.row_class(row)}">{cells}<td>{bars.row_bars(row)}{links}{warn}</td></tr>')
    graphs = "".join(
        f'<h3>{html.escape(r["workload"])} {html.escape(r["pattern"])} {html.escape(r["factory"])}</h3>'
        f'<object data="{html.escape(r["artifacts"]["flamegraph"])}" type="image/svg+xml" width="100%">'
        f"</object>" for r in rows if "flamegraph" in r.get("artifacts", {}))
    methods = "".join(f"<li><b>{k}</b>: {html.escape(v)}.</li>" for k, v in METHODS.items())
    with open(path, "w") as f:
        f.write(f"""<!doctype html><html><head><meta charset="utf-8"><title>Client CPU profile</title>
<style>body{{font-family:sans-serif;margin:1.5em}} table{{border-collapse:collapse;font-size:13px}}
td,th{{border:1px solid #ccc;padding:3px 6px;text-align:right}} td:nth-child(-n+3){{text-align:left}}
.warn{{color:#a33;font-size:11px;text-align:left}} pre.answer{{font-size:12px;background:#f8f8f8;padding:8px}} code{{background:#f4f4f4}} {bars.STYLE}</style></head><body>
<h1>Where does the client's CPU go?</h1>
<p><code>{html.escape(meta['command'])}</code><br>{html.escape(_meta_line(meta))}</p>
{answer_chart(rows)}{_answer_html(rows)}
<h2 id="details">The details, per combination</h2>
{bars.legend()}<table><tr>{head}</tr>{''.join(body)}</table><p>{html.escape(LEGEND + repeats.legend(rows))}.</p>
<h2>Instrumentation's own cost</h2><ul>{''.join(f"<li>{html.escape(c)}</li>" for c in costs(rows))}</ul>
{bars.advice_html(rows)}
<h2>Methods</h2><ul>{methods}</ul>{READING}
<p>speedscope files open at <a href="https://www.speedscope.app">speedscope.app</a>;
<code>snakeviz FILE.prof</code> opens a cProfile file; <code>summary.json</code> has every figure.</p>
<h2>Flamegraphs</h2>{graphs}</body></html>
""")
    return path
