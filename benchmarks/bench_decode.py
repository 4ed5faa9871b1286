"""Decode-only benchmark: captured RESULT bodies through the driver's protocol handler, then each factory.

    python -m benchmarks.bench_decode [--size quick|full] [--json PATH] [--fixtures a,b]

The timed step is what the driver does with a ROWS response once it has read
it off the socket: ``cassandra.protocol.ProtocolHandler.decode_message(...)``
(the Cython handler with its ``ListParser``, which deserialises every value),
then ``row_factory(msg.column_names, msg.parsed_rows)``. No network, no event
loop, no futures. The bodies are real ones captured from Cassandra by
``python -m benchmarks.capture`` (see ``benchmarks/data/fixtures``).

The fast path builds rows while decoding: its step is the handler that
``pyfactories.decoding.enable`` installs (``pyfactories.decoding.handler(rows)``)
decoding the same body, then ``tuple_factory``, which passes the finished rows
through, as the session does; for dataclass rows it decodes plain tuples and
``class_row`` builds the rows from them, as the session's route does. Without a usable fast path its columns are left
out and the reason is recorded in the results.

Harness as in ``bench_factories``: fresh worker processes, calibrated loops,
a dropped warm-up sample, interleaved rounds, medians; ratios are to the
driver's ``tuple_factory`` (which returns the decoded rows as they are, so
its figure is the cost of decoding alone).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Iterator, Sequence

from pyfactories._driver import feature_args
from profiling.factories import (BY_NAME, REFERENCE, counterpart, fastpath_status, grouped, label, offline, versus,
                                 versus_label)

from .data import fixtures
from .harness import cli, depths, timing, workers
from .harness.stats import per_call, ratio
from .reporting import chart
from .reporting.tables import fmt_ns, fmt_ratio, markdown_table

THIS = depths.BY_NAME["decode"]
SIZES: dict[str, dict[str, Any]] = {
    "quick": {"processes": 1, "rounds": 5, "sample_ms": 1.0},
    "full": {"processes": 3, "rounds": 7, "sample_ms": 5.0},
    "tiny": {"processes": 1, "rounds": 3, "sample_ms": 0.1},
}

Decoder = tuple[Callable[..., Any], Callable[[Any, Any], Any]]  # (decode_message, row_factory)


def fastpath_decoders() -> tuple[dict[str, Decoder], str | None]:
    """``{name: (decode_message, row_factory)}`` for the fast path's factories, or ``({}, why not)``."""
    usable, why_not = fastpath_status()
    if not usable:
        return {}, why_not
    from pyfactories import decoding

    handlers: dict[str, Any] = {n: decoding.handler(BY_NAME[n].fastpath) for n in usable}
    return {n: (handlers[n].decode_message, BY_NAME[n].row_factory) for n in usable}, None


def decoders(include_python: bool = True) -> tuple[dict[str, Decoder], str | None]:
    """Every choice timed here, in reading order, and why the fast path is absent."""
    from cassandra.protocol import ProtocolHandler

    out = {n: (ProtocolHandler.decode_message, f) for n, f in offline(include_python).items()}
    fast, why_not = fastpath_decoders()
    out.update(fast)
    return {n: out[n] for n in grouped(out)}, why_not


def make_step(decode: Callable[..., Any], fx: fixtures.Fixture) -> Callable[[Any, Any], Any]:
    """``step(row_factory, body)``: decode one RESULT body, then build its rows."""
    pv, flags, opcode, md = fx.protocol_version, fx.flags, fx.opcode, fx.result_metadata()
    features = feature_args(decode)  # as the installed driver calls it (scylla-driver: protocol features)
    user_types: dict[str, Any] = {}

    def step(row_factory: Callable[[Any, Any], Any], body: bytes) -> Any:
        msg = decode(pv, *features, user_types, 0, flags, opcode, body, None, md)
        return row_factory(msg.column_names, msg.parsed_rows)

    return step


def _work(spec: dict[str, Any]) -> dict[str, Any]:
    chosen, _ = decoders(spec["python_twins"])
    fxs = [fixtures.load(n) for n in spec["fixtures"]]
    timing.clear_caches()
    timing.settle_heap()
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
        samples[fx.name], loops[fx.name] = timing.interleaved_samples(cells, spec["rounds"], target_ns)
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
    merged = workers.merge_samples(workers.run_workers(THIS.module, spec, spec["processes"], say=say))
    cases = []
    for name in spec["fixtures"]:
        fx = fixtures.load(name)
        res: dict[str, dict[str, Any]] = {fname: per_call(vals, fx.rows) for fname, vals in merged[name].items()}
        base = res.get(REFERENCE, {}).get("ns_per_call")
        for r in res.values():
            r["ratio_to_tuple"] = ratio(r["ns_per_call"], base)
        cases.append({"id": name, "description": fx.description, "rows": fx.rows, "cols": fx.cols,
                      "body_bytes": len(fx.body), "protocol_version": fx.protocol_version,
                      "captured": fx.info.get("captured"), "cassandra": fx.info.get("cassandra"),
                      "results": res})
    return {
        "depth": THIS.key,
        "config": spec,
        "handler": f"{protocol.ProtocolHandler.__module__}.{protocol.ProtocolHandler.__qualname__}",
        "driver_cython": bool(getattr(protocol, "HAVE_CYTHON", False)),
        "fastpath_missing": why_not,
        "method": ("ProtocolHandler.decode_message(body) then row_factory(column_names, parsed_rows); "
                   "median of all samples; ratio_to_tuple between medians of this run"),
        "cases": cases,
    }


def verdicts(section: dict[str, Any]) -> list:
    """No targets at this depth."""
    return []


def figures(section: dict[str, Any]) -> Iterator[depths.Figure]:
    for c in section.get("cases", []):
        for f, r in c["results"].items():
            yield depths.Figure(c["id"], f, "ns/call", r.get("ns_per_call"), headline=True)
            if f != REFERENCE:
                yield depths.Figure(c["id"], f, "ratio to tuple", r.get("ratio_to_tuple"))


def render(section: dict[str, Any]) -> str:
    names = grouped({n for c in section["cases"] for n in c["results"]})
    faster = versus(names)
    cfg = section["config"]
    t_rows, r_rows = [], []
    for c in section["cases"]:
        res = c["results"]
        label_ = f"{c['id']} ({c['rows']}x{c['cols']})"
        t_rows.append([label_] + [fmt_ns(res[n]["ns_per_call"]) if n in res else "-" for n in names])
        r_rows.append([label_] + [fmt_ratio(res[n]["ratio_to_tuple"]) if n in res else "-" for n in names]
                      + [fmt_ratio(ratio(res.get(counterpart(n), {}).get("ns_per_call"),
                                         res.get(n, {}).get("ns_per_call"))) for n in faster])
    labels = [label(n) for n in names]
    parts = [
        f"### {THIS.title} ({cfg['processes']} process(es) x {cfg['rounds']} rounds, medians)",
        "",
        "Time per RESULT body: the driver's Cython `ProtocolHandler.decode_message`, then the row factory.",
        "",
        markdown_table(["body"] + labels, t_rows),
        "",
        "Relative to decode + `tuple_factory` (1.00x = the cost of decoding alone); `a/b` = how many times faster "
        "`b` is than `a` at this depth.",
        "",
        markdown_table(["body"] + labels + [versus_label(n) for n in faster], r_rows),
    ]
    if section.get("fastpath_missing"):
        parts += ["", f"Fast path not measured: {section['fastpath_missing']}."]
    return "\n".join(parts)


def _ratio_panel(ax: Any, section: dict[str, Any]) -> None:
    chart.bars(ax, section["cases"], "ratio_to_tuple",
               f"{THIS.title}: driver decode_message + row factory,\nrelative to decode + tuple_factory",
               "time / time with tuple_factory")


PANELS = (chart.Panel(THIS.title, _ratio_panel),)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if workers.is_worker(argv):
        return workers.worker_main(argv, _work)
    ap = cli.bench_parser(THIS.module, __doc__, SIZES, offline=True)
    ap.add_argument("--fixtures", help=f"comma-separated, of: {', '.join(fixtures.names())}")
    args = ap.parse_args(argv)
    spec = default_spec(args.size, args.fixtures.split(",") if args.fixtures else None, not args.no_python)
    section = run(cli.apply_overrides(spec, args.processes, args.rounds))
    cli.print_and_save(section, render, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
