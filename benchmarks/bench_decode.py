"""Decode-only benchmark: captured RESULT bodies through the driver's protocol handler, then each factory.

    python -m benchmarks.bench_decode [--size quick|full] [--json PATH] [--fixtures a,b]

The timed step is what the driver does with a ROWS response once it has read
it off the socket: ``cassandra.protocol.ProtocolHandler.decode_message(...)``
(the Cython handler with its ``ListParser``, which deserialises every value),
then ``row_factory(msg.column_names, msg.parsed_rows)``. No network, no event
loop, no futures. The bodies are real ones captured from Cassandra by
``python -m benchmarks.capture`` (see ``benchmarks/fixtures``).

Harness as in ``bench_factories``: fresh worker processes, calibrated loops,
a dropped warm-up sample, interleaved rounds, medians; ratios are to the
driver's ``tuple_factory`` (which returns the decoded rows as they are, so
its figure is the cost of decoding alone).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Sequence

from . import common, fixtures
from .common import COUNTERPART, SHORT, fmt_ns, fmt_ratio, markdown_table

SIZES: dict[str, dict[str, Any]] = {
    "quick": {"processes": 1, "rounds": 5, "sample_ms": 1.0},
    "full": {"processes": 3, "rounds": 7, "sample_ms": 5.0},
    "tiny": {"processes": 1, "rounds": 3, "sample_ms": 0.1},
}

ORDER = ("tuple", "named_tuple", "cached_named_tuple", "dict", "pf_dict", "ordered_dict", "pf_ordered_dict",
         "fastpath_named", "fastpath_dict", "py_cached_named_tuple", "py_dict", "py_ordered_dict")


# ------------------------------------------------------------------------------------------------
# HOOK: the fast path (pyfactories.fastpath, the lead's).
#
# The fast path builds rows while decoding, so it cannot be timed as "driver decode, then a row
# factory". This benchmark needs, without a session,
#
#     pyfactories.fastpath.handler(rows: str) -> type
#
# the protocol-handler class that ``enable(session, rows=rows)`` installs (a subclass of
# ``cassandra.protocol.ProtocolHandler``), whose classmethod ``decode_message`` has the driver's
# signature ``(protocol_version, user_type_map, stream_id, flags, opcode, body, decompressor,
# result_metadata)`` and returns a ROWS ``ResultMessage`` whose ``parsed_rows`` are the finished rows,
# which the session's ``tuple_factory`` then passes through (so the step timed is decode_message +
# tuple_factory, as for the other columns). If the hook is missing, the fast-path columns are left
# out and the reason is recorded in the results.
# ------------------------------------------------------------------------------------------------
FASTPATH_HOOK = "handler"


def fastpath_decoders() -> tuple[dict[str, tuple[Callable[..., Any], Callable[[Any, Any], Any]]], str | None]:
    """``{choice: (decode_message, row_factory)}`` for the fast-path choices that load, and why not if none."""
    import importlib

    from profiling.factories import BUILTIN

    names, why_not = common.fastpath_status()
    if not names:
        return {}, why_not
    make = getattr(importlib.import_module("pyfactories.fastpath"), FASTPATH_HOOK, None)
    if make is None:
        return {}, f"pyfactories.fastpath has no {FASTPATH_HOOK}(rows) to decode a RESULT body without a session"
    return {n: (make(BUILTIN[n].fastpath).decode_message, BUILTIN[n].row_factory) for n in names}, None


def decoders(include_python: bool = True) -> tuple[dict[str, tuple[Callable[..., Any], Callable[[Any, Any], Any]]],
                                                   str | None]:
    """Every choice timed here: ``{name: (decode_message, row_factory)}``, and why the fast path is absent."""
    from cassandra.protocol import ProtocolHandler

    out = {n: (ProtocolHandler.decode_message, f) for n, f in common.row_factories(include_python).items()}
    fast, why_not = fastpath_decoders()
    out.update(fast)
    return {n: out[n] for n in ORDER if n in out}, why_not


def make_step(decode: Callable[..., Any], fx: fixtures.Fixture) -> Callable[[Any, Any], Any]:
    """``step(row_factory, body)``: decode one RESULT body, then build its rows."""
    pv, flags, opcode, md = fx.protocol_version, fx.flags, fx.opcode, fx.result_metadata()
    user_types: dict[str, Any] = {}

    def step(row_factory: Callable[[Any, Any], Any], body: bytes) -> Any:
        msg = decode(pv, user_types, 0, flags, opcode, body, None, md)
        return row_factory(msg.column_names, msg.parsed_rows)

    return step


def _work(spec: dict[str, Any]) -> dict[str, Any]:
    chosen, _ = decoders(spec["python_twins"])
    fxs = [fixtures.load(n) for n in spec["fixtures"]]
    common.clear_caches()
    common.settle_heap()
    target_ns = int(spec["sample_ms"] * 1e6)
    samples, loops = {}, {}
    for fx in fxs:
        cells = []
        for name, (decode, factory) in chosen.items():
            step = make_step(decode, fx)
            out = step(factory, fx.body)
            if len(out) != fx.rows:
                raise RuntimeError(f"{fx.name}/{name}: {len(out)} rows, expected {fx.rows}")
            cells.append((name, step, factory, fx.body))
        samples[fx.name], loops[fx.name] = common.interleaved_samples(cells, spec["rounds"], target_ns)
    return {"samples": samples, "loops": loops}


def default_spec(size: str = "quick", names: Sequence[str] | None = None, python_twins: bool = True) -> dict[str, Any]:
    cfg = dict(SIZES[size])
    cfg.update(size=size, fixtures=list(names or fixtures.names()), python_twins=python_twins)
    return cfg


def run(spec: dict[str, Any], say=print) -> dict[str, Any]:
    from cassandra import protocol

    chosen, why_not = decoders(spec["python_twins"])
    say(f"decode-only: {len(spec['fixtures'])} captured bodies x {len(chosen)} factories, "
        f"{spec['processes']} process(es) x {spec['rounds']} rounds of ~{spec['sample_ms']} ms samples")
    if why_not:
        say(f"  fast path left out: {why_not}")
    results = common.run_workers("benchmarks.bench_decode", spec, spec["processes"], say=say)
    merged = common.merge_samples(results)
    cases = []
    for name in spec["fixtures"]:
        fx = fixtures.load(name)
        res: dict[str, Any] = {}
        for fname, vals in merged[name].items():
            s = common.summarize(vals)
            res[fname] = {"ns_per_call": s["median"], "ns_per_row": s["median"] / fx.rows,
                          "rel_iqr": s["rel_iqr"], "n": s["n"]}
        base = res.get("tuple", {}).get("ns_per_call")
        for fname, r in res.items():
            r["ratio_to_tuple"] = common.ratio(r["ns_per_call"], base)
        cases.append({"id": name, "description": fx.description, "rows": fx.rows, "cols": fx.cols,
                      "body_bytes": len(fx.body), "protocol_version": fx.protocol_version,
                      "captured": fx.info.get("captured"), "cassandra": fx.info.get("cassandra"),
                      "results": res})
    return {
        "depth": "decode",
        "config": spec,
        "handler": f"{protocol.ProtocolHandler.__module__}.{protocol.ProtocolHandler.__qualname__}",
        "driver_cython": bool(getattr(protocol, "HAVE_CYTHON", False)),
        "fastpath_missing": why_not,
        "method": ("ProtocolHandler.decode_message(body) then row_factory(column_names, parsed_rows); "
                   "median of all samples; ratio_to_tuple between medians of this run"),
        "cases": cases,
    }


def render(section: dict[str, Any]) -> str:
    present = {n for c in section["cases"] for n in c["results"]}
    names = [n for n in ORDER if n in present]
    cfg = section["config"]
    t_rows, r_rows = [], []
    for c in section["cases"]:
        res = c["results"]
        label = f"{c['id']} ({c['rows']}x{c['cols']})"
        t_rows.append([label] + [fmt_ns(res[n]["ns_per_call"]) if n in res else "-" for n in names])
        line = [label]
        for n in names:
            line.append(fmt_ratio(res[n]["ratio_to_tuple"]) if n in res else "-")
        for n in ("cached_named_tuple", "pf_dict", "pf_ordered_dict", "fastpath_named", "fastpath_dict"):
            if n in names:
                line.append(fmt_ratio(common.ratio(res.get(COUNTERPART[n], {}).get("ns_per_call"),
                                                   res.get(n, {}).get("ns_per_call"))))
        r_rows.append(line)
    speed_cols = [f"{SHORT[COUNTERPART[n]]}/{SHORT[n]}" for n in
                  ("cached_named_tuple", "pf_dict", "pf_ordered_dict", "fastpath_named", "fastpath_dict") if n in names]
    parts = [
        f"### Decode only ({cfg['processes']} process(es) x {cfg['rounds']} rounds, medians)",
        "",
        "Time per RESULT body: the driver's Cython `ProtocolHandler.decode_message`, then the row factory.",
        "",
        markdown_table(["body"] + [SHORT[n] for n in names], t_rows),
        "",
        "Relative to decode + `tuple_factory` (1.00x = the cost of decoding alone); `a/b` = how many times faster "
        "`b` is than `a` at this depth.",
        "",
        markdown_table(["body"] + [SHORT[n] for n in names] + speed_cols, r_rows),
    ]
    if section.get("fastpath_missing"):
        parts += ["", f"Fast path not measured: {section['fastpath_missing']}."]
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        common.worker_main(argv[1:], _work)
        return 0
    ap = common.bench_parser("benchmarks.bench_decode", __doc__, SIZES, offline=True)
    ap.add_argument("--fixtures", help=f"comma-separated, of: {', '.join(fixtures.names())}")
    args = ap.parse_args(argv)
    spec = default_spec(args.size, args.fixtures.split(",") if args.fixtures else None, not args.no_python)
    section = run(common.apply_overrides(spec, args.processes, args.rounds))
    common.print_and_save("decode", section, render, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
