"""A bounded load on the service: ``--clients`` keep-alive HTTP connections on loopback share
``--requests`` requests a round over a fixed mix of the endpoints; the service's CPU (all its threads:
``/proc/PID/stat`` user + system) is read before and after each round.

    python -m examples.asyncio_service.load [--hosts 127.0.0.9] [--rounds 3] [--json]

starts the service twice, ``--pyfactories off`` and ``on``, against the same node, warms both, then
measures them in interleaved rounds (off, on, then on, off, ...) and prints one line per position with
requests/s, latency p50/p90/p99 and CPU per HTTP request, compared with the driver and its bridge.

    python -m examples.asyncio_service.load --url http://127.0.0.1:8080 --pid PID

loads one service that is already running (under the profiler, say) the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import select
import signal
import subprocess
import sys
import time
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit

from profiling.timing.procfs import process_cpu_ns

from .figures import POSITIONS, Round, as_json, summarize, table
from .http_client import HttpConnection
from .store import READINGS_PER_SENSOR, SEEDED_SENSORS, WRITTEN_SENSORS

REPO = Path(__file__).resolve().parents[2]
#: the endpoints of ten requests in a row: six single readings, a partition, a count, two inserts
MIX = ("one",) * 6 + ("partition", "count", "insert", "insert")
START_TIMEOUT_S = 120.0


def planned_request(i: int) -> tuple[str, str, bytes]:
    """Request number ``i`` of a load: its method, target and body (the same for every position)."""
    kind = MIX[i % len(MIX)]
    sensor = (i // len(MIX)) % SEEDED_SENSORS
    if kind == "one":
        return "GET", f"/readings/{sensor}/{i * 7 % READINGS_PER_SENSOR}", b""
    if kind == "partition":
        return "GET", f"/readings/{sensor}", b""
    if kind == "count":
        return "GET", f"/readings/{sensor}/count", b""
    body = json.dumps({"seq": i, "value": i / 2, "note": f"load request {i}"}).encode()
    return "POST", f"/readings/{WRITTEN_SENSORS + sensor}", body


@dataclass
class Service:
    """A running service: where it answers, its PID, and its switch position."""

    position: str
    host: str
    port: int
    pid: int
    process: subprocess.Popen | None = None


def start_service(position: str, hosts: str, cql_port: int = 9042) -> Service:
    """``python -m examples.asyncio_service --pyfactories POSITION --port 0``, once it says it serves."""
    command = [sys.executable, "-m", "examples.asyncio_service", "--pyfactories", position, "--port", "0",
               "--hosts", hosts, "--cql-port", str(cql_port)]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True)
    ready, _, _ = select.select([process.stdout], [], [], START_TIMEOUT_S)
    line = process.stdout.readline() if ready else ""  # type: ignore[union-attr]
    if not line.startswith("serving "):
        stop_service(Service(position, "", 0, process.pid, process))
        raise RuntimeError(f"the service ({' '.join(command)}) did not start: exit code {process.returncode}, "
                           f"it printed {line!r}")
    url, *fields = line.split()[1:]
    where = urlsplit(url)
    pid = int(dict(f.split("=", 1) for f in fields)["pid"])
    return Service(position, where.hostname or "127.0.0.1", where.port or 80, pid, process)


def stop_service(service: Service) -> None:
    """SIGTERM (uvicorn's graceful stop), then SIGKILL after 15 s; its output pipe closed."""
    process = service.process
    if process is None:
        return
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout:
        process.stdout.close()


@contextmanager
def services(positions: list[str], hosts: str, cql_port: int) -> Iterator[list[Service]]:
    started: list[Service] = []
    try:
        for position in positions:
            started.append(start_service(position, hosts, cql_port))
        yield started
    finally:
        for service in started:
            stop_service(service)


async def load(service: Service, clients: int, requests: range) -> Round:
    """``requests`` (their numbers) on ``clients`` connections opened first; one :class:`Round`."""
    todo = iter(requests)
    latencies: list[float] = []
    errors = 0

    async def client(connection: HttpConnection) -> None:
        nonlocal errors
        for i in todo:
            method, target, body = planned_request(i)
            began = time.perf_counter()
            status, _ = await connection.request(method, target, body)
            latencies.append(time.perf_counter() - began)
            if status >= 400:
                errors += 1

    async with AsyncExitStack() as stack:
        connections = [await stack.enter_async_context(HttpConnection(service.host, service.port))
                       for _ in range(clients)]
        cpu_before, began = process_cpu_ns(service.pid), time.perf_counter()
        await asyncio.gather(*(client(c) for c in connections))
        wall, cpu = time.perf_counter() - began, process_cpu_ns(service.pid) - cpu_before
    return Round(service.position, len(latencies), errors, wall, cpu, latencies)


def measure(targets: list[Service], clients: int, requests: int, rounds: int, warmup: int,
            say=print) -> list[Round]:
    """Each target warmed with ``warmup`` requests, then ``rounds`` rounds of ``requests`` each, the
    targets' order reversed every round."""
    done: list[Round] = []
    first = 0
    for service in targets:
        asyncio.run(load(service, clients, range(first, first + warmup)))
        first += warmup
    for number in range(rounds):
        for service in targets if number % 2 == 0 else targets[::-1]:
            measured = asyncio.run(load(service, clients, range(first, first + requests)))
            first += requests
            say(f"round {number + 1}/{rounds} {POSITIONS.get(service.position, service.position)}: "
                f"{measured.requests / measured.wall_s:.0f} req/s, {measured.cpu_us_per_request:.0f} µs CPU/request")
            done.append(measured)
    return done


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m examples.asyncio_service.load",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16, help="concurrent keep-alive connections")
    parser.add_argument("--requests", type=int, default=3000, help="requests per round and position")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1000, help="unmeasured requests per position first")
    parser.add_argument("--hosts", default=os.environ.get("PYFACTORIES_HOSTS", "127.0.0.1"),
                        help="the node the services use (default: $PYFACTORIES_HOSTS, else 127.0.0.1)")
    parser.add_argument("--cql-port", type=int, default=9042)
    parser.add_argument("--url", help="load this running service instead of starting two (needs --pid)")
    parser.add_argument("--pid", type=int, help="the PID of the service at --url, for its CPU")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if (args.url is None) != (args.pid is None):
        parser.error("--url and --pid go together")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    say = (lambda text: print(text, file=sys.stderr)) if args.json else print
    if args.url:
        where = urlsplit(args.url)
        running = Service(args.url, where.hostname or "127.0.0.1", where.port or 80, args.pid)
        rounds = measure([running], args.clients, args.requests, args.rounds, args.warmup, say)
    else:
        with services(["off", "on"], args.hosts, args.cql_port) as started:
            rounds = measure(started, args.clients, args.requests, args.rounds, args.warmup, say)
    summaries = summarize(rounds)
    if args.json:
        print(json.dumps({"clients": args.clients, "requests_per_round": args.requests, "rounds": args.rounds,
                          "mix": list(MIX), "positions": as_json(summaries)}, indent=2))
    else:
        print(f"{args.clients} clients, {args.requests} requests a round, mix: {', '.join(MIX)}")
        print(table(summaries))


if __name__ == "__main__":
    main()
