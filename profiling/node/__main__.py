"""Command line: ``python -m profiling.node {fetch,up,down,status,log,nodetool,wipe}``."""

from __future__ import annotations

import argparse
import subprocess
import sys

from . import config, external_hosts, port, protocol, server
from .config import Node
from .fetch import NodeError, find_java

EXIT_NOT_UP = 3


def say(msg: str) -> None:
    print(msg, flush=True)


def cmd_fetch(_args: argparse.Namespace) -> int:
    server.fetch_locked(say)
    return 0


def cmd_up(args: argparse.Namespace) -> int:
    _started, running = server.up(args.nodes, args.heap, args.timeout, say)
    say(f"cluster up: {', '.join(n.address for n in running)} (CQL port {config.CQL_PORT}); "
        f"logs under {config.nodes_dir()}/node*/logs")
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    stopped = server.down(None, args.timeout, say)
    say(f"stopped {len(stopped)} node(s)" if stopped else "nothing to stop")
    return 0


def _external_status() -> int:
    ok = True
    for host in external_hosts():
        up = protocol.answers(host, port())
        ok &= up
        say(f"{host}:{port()}  cql {'ok' if up else 'NO'}  (external, PYFACTORIES_HOSTS)")
    return 0 if ok else EXIT_NOT_UP


def cmd_status(_args: argparse.Namespace) -> int:
    if external_hosts():
        return _external_status()
    count = config.load_state().get("nodes", 0)
    nodes = server.known_nodes()
    if not nodes:
        say(f"no nodes configured in {config.nodes_dir()} (run: python -m profiling.node up)")
        return EXIT_NOT_UP
    for node in nodes:
        st = server.node_status(node)
        rss = f"{st['rss_mb']:.0f} MB" if st["rss_mb"] else "-"
        cql = f"ok (CQL {st['cql_version']})" if st["cql"] else "NO"
        extra = "" if node.index <= count else "  (not part of the configured cluster)"
        if st["pid"] and not st["alive"] and server.alive(st["pid"]):
            extra += "  (stale pid file: that pid is another process)"
        say(f"{st['node']}  {st['address']}  pid {st['pid'] or '-'}  alive {'yes' if st['alive'] else 'no'}"
            f"  cql {cql}  rss {rss}  log {st['log']}{extra}")
    all_up = count > 0 and all(server.node_status(Node(i))["up"] for i in range(1, count + 1))
    return 0 if all_up else EXIT_NOT_UP


def cmd_log(args: argparse.Namespace) -> int:
    node = Node(args.node)
    path = node.stdout_path if args.stdout else node.log_path
    if not path.exists():
        say(f"no log yet at {path}")
        return 1
    lines = server.tail_lines(path, args.lines)
    say(f"--- {path} (last {len(lines)} lines) ---")
    say("\n".join(lines))
    return 0


def cmd_nodetool(args: argparse.Namespace) -> int:
    node = Node(args.node)
    if not server.running_pid(node):
        raise NodeError(f"{node.name} is not running")
    return subprocess.run(config.nodetool_command(find_java(), node, args.args),
                          stdin=subprocess.DEVNULL).returncode


def cmd_wipe(_args: argparse.Namespace) -> int:
    server.wipe(say)
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m profiling.node",
                                description="Run a real Apache Cassandra on loopback for tests and benchmarks.")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("fetch", help="download the Cassandra jars (once)").set_defaults(func=cmd_fetch)

    up = sub.add_parser("up", help="start node(s) and wait until they answer CQL")
    up.add_argument("--nodes", type=int, default=1, help="cluster size, nodes on 127.0.0.1..N "
                    "(from PYFACTORIES_FIRST_ADDRESS if set; default 1)")
    up.add_argument("--heap", help="heap per node, e.g. 256M (default 1G for 1 node, 512M each for more)")
    up.add_argument("--timeout", type=float, default=config.START_TIMEOUT, help="seconds per node (default 180)")
    up.set_defaults(func=cmd_up)

    down = sub.add_parser("down", help="stop the nodes this tool started")
    down.add_argument("--timeout", type=float, default=30.0, help="seconds before SIGKILL (default 30)")
    down.set_defaults(func=cmd_down)

    sub.add_parser("status", help="show nodes; exit 0 if all are up, 3 otherwise").set_defaults(func=cmd_status)

    log = sub.add_parser("log", help="print the tail of a node's log")
    log.add_argument("--node", type=int, default=1)
    log.add_argument("-n", "--lines", type=int, default=40)
    log.add_argument("--stdout", action="store_true", help="the JVM's stdout/stderr instead of system.log")
    log.set_defaults(func=cmd_log)

    tool = sub.add_parser("nodetool", help="run nodetool against a node, e.g. `nodetool status`")
    tool.add_argument("--node", type=int, default=1)
    tool.add_argument("args", nargs=argparse.REMAINDER)
    tool.set_defaults(func=cmd_nodetool)

    sub.add_parser("wipe", help="delete all node data (nodes must be down)").set_defaults(func=cmd_wipe)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (NodeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
