"""Every depth in one command: JSON, a markdown table and a PNG chart.

    python -m benchmarks.run --size quick       # about 3 minutes on 2 busy cores (make bench-quick)
    python -m benchmarks.run --size full        # 16-23 minutes (make bench)
    python -m benchmarks.run --hosts 10.0.0.5 --skip factory

The depths are those of ``benchmarks.harness.depths``. The ones that need a server use
the project's local Cassandra node: it is started if it is not running (and
then stopped at the end), reused as it is otherwise. ``--size full`` measures
the end-to-end depth in its reference configuration (client and server pinned
apart: ``benchmarks.e2e.reference``), then unpinned beside it; ``--server-pid``
names a node on this machine that the project did not start, so it can be
pinned. ``--hosts`` (or
``PYFACTORIES_HOSTS``) points them at a cluster of your own instead, and
nothing is started or stopped. Results go to ``bench-results/<timestamp>/``
(``results.json``, ``results.md``, ``chart.png``) unless ``--out`` says otherwise.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import shlex
import sys
import time
import traceback
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable, Sequence

from profiling.cluster import Contact, reach

from . import REPO_ROOT
from .harness import depths
from .harness.environment import environment
from .reporting import chart, markdown, targets
from .reporting.results_json import SCHEMA_VERSION, write_json


def default_out_dir() -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return REPO_ROOT / "bench-results" / stamp


def _show(table: str) -> None:
    print()
    print(table)
    print()


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    names = [d.name for d in depths.DEPTHS]
    ap = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", choices=("quick", "full"), default="quick")
    ap.add_argument("--out", help="output directory (default bench-results/<timestamp>/)")
    ap.add_argument("--hosts", help="comma-separated contact points of your own cluster (nothing is started)")
    ap.add_argument("--port", type=int, help="CQL port (default 9042 or PYFACTORIES_PORT)")
    ap.add_argument("--server-pid", type=int, action="append", metavar="PID",
                    help="a Cassandra node on this machine that the project did not start (repeatable): pinned "
                         "for the end-to-end depth's reference configuration")
    ap.add_argument("--skip", default="", help=f"comma-separated depths to leave out, of: {', '.join(names)}")
    args = ap.parse_args(argv)
    skip = {s for s in args.skip.split(",") if s}
    unknown = skip - set(names)
    if unknown:
        ap.error(f"unknown depth(s) {', '.join(sorted(unknown))}; choose from {', '.join(names)}")

    t0 = time.perf_counter()
    out_dir = Path(args.out) if args.out else default_out_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "schema": SCHEMA_VERSION,
        "kind": "pyfactories-bench",
        "size": args.size,
        "command": "python -m benchmarks.run " + " ".join(shlex.quote(a) for a in argv),
        "env": environment(),
    }
    failed: list[str] = []
    with ExitStack() as stack:
        server = _server(stack, args)
        for depth in depths.DEPTHS:
            if depth.name in skip:
                continue
            spec = depth.bench.default_spec(args.size)
            if depth.server and args.server_pid:
                spec["server_pids"] = args.server_pid
            section = _on_server(depth, spec, server, failed) if depth.server else depth.run(spec)
            results[depth.key] = section
            if section.get("cassandra"):
                results["env"]["cassandra"] = section["cassandra"]
            _show(depth.bench.render(section))

    results["verdicts"] = targets.as_json(targets.all_verdicts(results))
    results["duration_s"] = time.perf_counter() - t0
    json_path = write_json(out_dir / "results.json", results)
    md_path = out_dir / "results.md"
    md_path.write_text(markdown.render(results))
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


def _server(stack: ExitStack, args: argparse.Namespace) -> Callable[[], Contact]:
    """The cluster of the depths that need one, reached the first time one asks (and left when
    ``stack`` closes: a node started for the run is stopped then)."""
    reached: list[Contact] = []

    def contact() -> Contact:
        if not reached:
            reached.append(stack.enter_context(reach(args.hosts, args.port)))
        return reached[0]

    return contact


def _on_server(depth: depths.Depth, spec: dict[str, Any], server: Callable[[], Contact],
               failed: list[str]) -> dict[str, Any]:
    """A depth that needs a server; if it fails, the other depths' results are still written."""
    try:
        return depth.run(spec, server())
    except Exception as exc:
        traceback.print_exc()
        failed.append(f"{depth.title}: {exc}")
        return {"depth": depth.key, "config": spec, "skipped": f"error: {exc}", "cases": []}


if __name__ == "__main__":
    sys.exit(main())
