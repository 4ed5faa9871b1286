"""All three depths in one command: JSON, a markdown table and a PNG chart.

    python -m benchmarks.run --size quick       # about 1 minute on 2 cores (make bench-quick)
    python -m benchmarks.run --size full        # about 10 minutes (make bench)
    python -m benchmarks.run --hosts 10.0.0.5 --skip factory

The end-to-end depth uses the project's local Cassandra node: it is started
if it is not running (and then stopped at the end), reused as it is
otherwise. ``--hosts`` (or ``PYFACTORIES_HOSTS``) points it at a cluster of
your own instead, and nothing is started or stopped. Results go to
``bench-results/<timestamp>/`` (``results.json``, ``results.md``,
``chart.png``) unless ``--out`` says otherwise.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import shlex
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Sequence

from . import bench_decode, bench_e2e, bench_factories, chart, common, report, targets

DEPTHS = ("factory", "decode", "e2e")


def default_out_dir() -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return common.REPO_ROOT / "bench-results" / stamp


def _show(table: str) -> None:
    print()
    print(table)
    print()


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", choices=("quick", "full"), default="quick")
    ap.add_argument("--out", help="output directory (default bench-results/<timestamp>/)")
    ap.add_argument("--hosts", help="comma-separated contact points of your own cluster (nothing is started)")
    ap.add_argument("--port", type=int, help="CQL port (default 9042 or PYFACTORIES_PORT)")
    ap.add_argument("--skip", default="", help=f"comma-separated depths to leave out, of: {', '.join(DEPTHS)}")
    args = ap.parse_args(argv)
    skip = {s for s in args.skip.split(",") if s}
    unknown = skip - set(DEPTHS)
    if unknown:
        ap.error(f"unknown depth(s) {', '.join(sorted(unknown))}; choose from {', '.join(DEPTHS)}")

    t0 = time.perf_counter()
    out_dir = Path(args.out) if args.out else default_out_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "schema": common.SCHEMA_VERSION,
        "kind": "pyfactories-bench",
        "size": args.size,
        "command": "python -m benchmarks.run " + " ".join(shlex.quote(a) for a in argv),
        "env": common.environment(),
    }
    failed: list[str] = []

    offline = (("factory", "factory_only", bench_factories), ("decode", "decode", bench_decode))
    for name, key, bench in offline:
        if name not in skip:
            results[key] = bench.run(bench.default_spec(args.size))
            _show(bench.render(results[key]))
    if "e2e" not in skip:
        results["e2e"] = _end_to_end(args, failed)
        if results["e2e"].get("cassandra"):
            results["env"]["cassandra"] = results["e2e"]["cassandra"]
        _show(bench_e2e.render(results["e2e"]))

    results["verdicts"] = targets.as_json(targets.all_verdicts(results))
    results["duration_s"] = time.perf_counter() - t0
    json_path = common.write_json(out_dir / "results.json", results)
    md_path = out_dir / "results.md"
    md_path.write_text(report.render(results))
    png_path = chart.draw(results, out_dir / "chart.png")
    print("### All targets\n")
    print(targets.summary(targets.Verdict(**v) for v in results["verdicts"]))
    print()
    print(f"done in {results['duration_s']:.0f} s")
    print(f"JSON:     {json_path}")
    print(f"markdown: {md_path}")
    print(f"chart:    {png_path}")
    if failed:
        print(f"FAILED: {'; '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _end_to_end(args: argparse.Namespace, failed: list[str]) -> dict[str, Any]:
    from profiling.node import ensure_up, port, stop

    spec = bench_e2e.default_spec(args.size)
    started = False
    try:
        if args.hosts:
            hosts = [h.strip() for h in args.hosts.split(",") if h.strip()]
        else:
            started, hosts = ensure_up(nodes=1)
        return bench_e2e.run(spec, hosts, args.port or port())
    except Exception as exc:  # the other depths' results are still written
        traceback.print_exc()
        failed.append(f"end to end: {exc}")
        return {"depth": "e2e", "config": spec, "skipped": f"error: {exc}", "cases": []}
    finally:
        if started:
            print("stopping the node this run started")
            stop()


if __name__ == "__main__":
    sys.exit(main())
