"""``python -m examples.asyncio_service [--pyfactories on|off] [--port 8080] [--hosts 127.0.0.1]``

Connects (with ``pyfactories.enable(cluster)`` or without), makes and fills the keyspace if it is not
there, binds the HTTP port, prints one line ``serving http://HOST:PORT pyfactories=on|off pid=PID`` and
serves with uvicorn until Ctrl-C or SIGTERM (then exits 130 or 143, its open requests answered and the
cluster shut down). ``--port 0`` takes a free port (the line says which).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket

import uvicorn

from .app import make_app
from .store import AwaitedStore, BridgedStore, open_session

#: the switch's environment variable, used when ``--pyfactories`` is not given
SWITCH_VARIABLE = "ASYNCIO_SERVICE_PYFACTORIES"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m examples.asyncio_service", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pyfactories", choices=("on", "off"), default=os.environ.get(SWITCH_VARIABLE, "on"),
                        help=f"on: pyfactories.enable(cluster) and await; off: the driver and the hand-written "
                             f"bridge (default: ${SWITCH_VARIABLE}, else on)")
    parser.add_argument("--hosts", default=os.environ.get("PYFACTORIES_HOSTS", "127.0.0.1"),
                        help="Cassandra contact points, comma-separated (default: $PYFACTORIES_HOSTS, else 127.0.0.1)")
    parser.add_argument("--cql-port", type=int, default=9042)
    parser.add_argument("--host", default="127.0.0.1", help="the HTTP address to listen on")
    parser.add_argument("--port", type=int, default=8080, help="the HTTP port (0: any free one)")
    parser.add_argument("--loop", choices=("auto", "asyncio", "uvloop"), default="auto",
                        help="uvicorn's event loop (auto: uvloop when it is installed)")
    return parser.parse_args(argv)


def exit_on_signal(signum: int, _frame: object) -> None:
    """After uvicorn's graceful stop, which raises the signal again: exit as Ctrl-C would, with the
    cluster shut down and the exit handlers run (a profiler's among them), and no traceback."""
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, exit_on_signal)
    hosts = [h.strip() for h in args.hosts.split(",") if h.strip()]
    use_pyfactories = args.pyfactories == "on"
    cluster, session = open_session(hosts, args.cql_port, use_pyfactories)
    try:
        store = (AwaitedStore if use_pyfactories else BridgedStore)(session)
        listener = socket.create_server((args.host, args.port), backlog=1024)
        host, port = listener.getsockname()[:2]
        config = uvicorn.Config(make_app(store), loop=args.loop, log_level="warning", access_log=False)
        print(f"serving http://{host}:{port} pyfactories={args.pyfactories} pid={os.getpid()}", flush=True)
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    main()
