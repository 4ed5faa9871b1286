"""Starting, watching and stopping the local Cassandra processes.

Each node runs as a detached JVM (its own session, so Ctrl-C in the terminal
or the end of a pytest run does not reach it) and is tracked only through the
PID file in its folder.  We never signal a PID whose command line is not the
CassandraDaemon of that very node, so a stale PID file cannot hurt anything.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from . import config, protocol
from .config import Node
from .fetch import NodeError, fetch, find_java, is_fetched

Say = Callable[[str], None]

# Popen objects of nodes started by this process: polling them reaps exited
# children (otherwise a zombie would look alive) and keeps Popen.__del__ quiet.
# A reaped child leaves for _EXIT_CODES: its PID is free for another process.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}
_EXIT_CODES: dict[int, int] = {}


@contextlib.contextmanager
def locked() -> Iterator[None]:
    """Serialise up/down across processes (e.g. parallel pytest workers)."""
    config.cache_dir().mkdir(parents=True, exist_ok=True)
    with open(config.cache_dir() / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# --- processes ---------------------------------------------------------------

def _cmdline(pid: int) -> str:
    try:
        # A process still in exec (a child just started, as ``Popen`` returns) shows an empty command
        # line for a moment: asked again until it has one, for at most 50 ms.
        for _ in range(50):
            found = Path(f"/proc/{pid}/cmdline").read_bytes()
            if found:
                break
            time.sleep(0.001)
        return found.replace(b"\0", b" ").decode(errors="replace")
    except FileNotFoundError:
        return ""
    except OSError:  # no /proc (macOS): ask ps
        out = subprocess.run(["ps", "-ww", "-o", "command=", "-p", str(pid)], capture_output=True, text=True)
        return out.stdout


def alive(pid: int) -> bool:
    """True for a running process; False for gone or zombie ones."""
    child = _CHILDREN.get(pid)
    if child is not None:
        code = child.poll()
        if code is None:
            return True
        _CHILDREN.pop(pid, None)  # (another thread may have reaped it too)
        _EXIT_CODES[pid] = code
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def read_pid(node: Node) -> int | None:
    try:
        return int(node.pid_path.read_text().strip())
    except (OSError, ValueError):
        return None


def is_ours(pid: int, node: Node) -> bool:
    """Is ``pid`` the CassandraDaemon we started for ``node`` (not a reused PID)?"""
    cmd = _cmdline(pid)
    return config.MAIN_CLASS in cmd and node.config_marker in cmd


def running_pid(node: Node) -> int | None:
    pid = read_pid(node)
    return pid if pid is not None and alive(pid) and is_ours(pid, node) else None


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


# --- logs --------------------------------------------------------------------

def tail_lines(path: Path, lines: int, since: int = 0) -> list[str]:
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(since if since <= size else 0)
            text = fh.read().decode(errors="replace")
    except OSError:
        return []
    return text.splitlines()[-lines:]


def log_tail(node: Node, lines: int = 40, since: dict[Path, int] | None = None) -> str:
    """Last lines of the node's system.log and of its JVM stdout (if not empty)."""
    since = since or {}
    parts = []
    for path in (node.log_path, node.stdout_path):
        tail = tail_lines(path, lines, since.get(path, 0))
        if tail:
            parts.append(f"--- last {len(tail)} lines of {path} ---\n" + "\n".join(tail))
    return "\n".join(parts) or f"(no log output in {node.path('logs')})"


def _log_offsets(node: Node) -> dict[Path, int]:
    return {p: (p.stat().st_size if p.exists() else 0) for p in (node.log_path, node.stdout_path)}


def exit_watch() -> Callable[[], str | None]:
    """A check on the local nodes running now: it answers ``None`` while they all run, else which
    exited and the last lines of their output (the JVM prints why: ``Terminating due to
    java.lang.OutOfMemoryError: Java heap space``). Paths are taken now, so a later change of
    ``PYFACTORIES_NODES_DIR`` does not move them."""
    watched = [(node, pid, node.stdout_path, node.log_path, _log_offsets(node))
               for node in known_nodes() if (pid := running_pid(node)) is not None]

    def check() -> str | None:
        gone = []
        for node, pid, stdout, log, offsets in watched:
            if alive(pid):
                continue
            said = [line for line in tail_lines(stdout, 5, offsets.get(stdout, 0)) if not line.startswith("WARNING:")]
            errors = [line for line in tail_lines(log, 400, offsets.get(log, 0)) if line.startswith("ERROR")][-3:]
            gone.append(f"{node.name} (pid {pid}) exited during the run"
                        + "".join(f"\n  {line}" for line in said + errors)
                        + f"\n  (its logs: {log.parent})")
        return "\n".join(gone) or None

    return check


# --- start -------------------------------------------------------------------

def known_nodes() -> list[Node]:
    """Nodes that have a folder, plus those the last ``up`` configured."""
    indices = set(range(1, config.load_state().get("nodes", 0) + 1))
    for path in config.nodes_dir().glob("node*"):
        if path.name[4:].isdigit():
            indices.add(int(path.name[4:]))
    return [Node(i) for i in sorted(indices)]


def _spawn(java: str, node: Node, heap: str) -> subprocess.Popen[bytes]:
    config.write_node_files(node)
    node.pid_path.unlink(missing_ok=True)
    with open(node.stdout_path, "ab") as out:
        out.write(f"=== {time.strftime('%Y-%m-%d %H:%M:%S')} starting {node.name} ===\n".encode())
        out.flush()
        proc = subprocess.Popen(
            config.server_command(java, node, heap),
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            cwd=node.root, start_new_session=True, close_fds=True,
        )
    _CHILDREN[proc.pid] = proc
    _EXIT_CODES.pop(proc.pid, None)
    node.pid_path.write_text(f"{proc.pid}\n")
    return proc


def _wait_ready(node: Node, pid: int, timeout: float, offsets: dict[Path, int]) -> float:
    """Poll the CQL handshake until it succeeds; raise if the JVM dies or time runs out."""
    started = time.monotonic()
    while True:
        if protocol.answers(node.address, config.CQL_PORT, timeout=2.0):
            return time.monotonic() - started
        if not alive(pid):
            code = _EXIT_CODES.get(pid, "?")
            raise NodeError(f"{node.name} (pid {pid}) exited with code {code} during start-up\n"
                            + log_tail(node, since=offsets))
        if time.monotonic() - started > timeout:
            raise NodeError(f"{node.name} (pid {pid}) did not answer a CQL handshake on "
                            f"{node.address}:{config.CQL_PORT} within {timeout:.0f} s\n"
                            + log_tail(node, since=offsets))
        time.sleep(0.5)


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def _check_ports_free(node: Node) -> None:
    """Fail fast (instead of after a 10 s JVM start) if another program holds our ports."""
    if protocol.answers(node.address, config.CQL_PORT):
        raise NodeError(f"a Cassandra not started by this tool already serves CQL on "
                        f"{node.address}:{config.CQL_PORT}; stop it, or use it with "
                        f"PYFACTORIES_HOSTS={node.address}")
    ports = [(node.address, config.CQL_PORT), (node.address, config.STORAGE_PORT),
             ("127.0.0.1", node.jmx_port)]
    busy = [f"{h}:{p}" for h, p in ports if _listening(h, p)]
    if busy:
        raise NodeError(f"{node.name} cannot start: {', '.join(busy)} already in use by another program")


def _start_node(java: str, node: Node, heap: str, timeout: float, say: Say) -> None:
    offsets = _log_offsets(node)
    proc = _spawn(java, node, heap)
    say(f"{node.name}: starting on {node.address}:{config.CQL_PORT} (pid {proc.pid}, heap {heap}); "
        f"log: {node.log_path}")
    took = _wait_ready(node, proc.pid, timeout, offsets)
    say(f"{node.name}: up in {took:.1f} s")


def _prepare_layout(nodes: int, size: int, any_running: bool, heap: str, say: Say) -> None:
    """Record the cluster size.  Data of a bigger cluster cannot serve a smaller
    one (token ranges would point at nodes that are down), so shrinking a
    stopped cluster wipes the old data; a running bigger cluster is just reused."""
    previous = config.load_state().get("nodes", 0)
    if not any_running and previous > nodes and config.nodes_dir().exists():
        say(f"wiping the data of the previous {previous}-node cluster in {config.nodes_dir()}")
        shutil.rmtree(config.nodes_dir())
    config.save_state(size, heap)


def up(nodes: int = 1, heap: str | None = None, timeout: float = config.START_TIMEOUT,
       say: Say = print) -> tuple[list[Node], list[Node]]:
    """Make nodes 1..N run and answer CQL; return (nodes started now, all running nodes).

    Nodes start one after another: a node only bootstraps once the previous
    one serves CQL.  On any failure (or Ctrl-C) the nodes started by this call
    are stopped again.  If a bigger cluster is already running it is used as is.
    """
    if not 1 <= nodes <= config.MAX_NODES:
        raise NodeError(f"--nodes must be between 1 and {config.MAX_NODES}")
    heap = config.check_heap(heap or config.default_heap(nodes))
    java = find_java()
    with locked():
        if not is_fetched():
            fetch(say)
        running = [n for n in known_nodes() if running_pid(n)]
        size = max([nodes] + [n.index for n in running])
        _prepare_layout(nodes, size, bool(running), heap, say)
        wanted = [Node(i) for i in range(1, size + 1)]
        started: list[Node] = []
        try:
            for node in wanted:
                pid = running_pid(node)
                if pid is not None:
                    took = _wait_ready(node, pid, timeout, _log_offsets(node))
                    say(f"{node.name}: already up (pid {pid}){'' if took < 1 else f' after {took:.0f} s'}")
                    continue
                _check_ports_free(node)
                started.append(node)
                _start_node(java, node, heap, timeout, say)
        except BaseException:
            if started:
                say(f"stopping what this call started: {', '.join(n.name for n in started)}")
                _stop(started, say=say)
            raise
        return started, wanted


def fetch_locked(say: Say = print) -> Path:
    with locked():
        return fetch(say)


# --- stop --------------------------------------------------------------------

def _signal_all(pids: dict[Node, int], sig: int) -> None:
    for node, pid in pids.items():
        if alive(pid) and is_ours(pid, node):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)


def _wait_gone(pids: dict[Node, int], timeout: float) -> dict[Node, int]:
    deadline = time.monotonic() + timeout
    while True:
        left = {n: p for n, p in pids.items() if alive(p)}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def _stop(nodes: list[Node], timeout: float = 30.0, say: Say = print) -> list[Node]:
    victims: dict[Node, int] = {}
    for node in nodes:
        pid = read_pid(node)
        if pid is not None and alive(pid):
            if is_ours(pid, node):
                victims[node] = pid
            else:
                say(f"{node.name}: pid {pid} is not our Cassandra (stale pid file); leaving it alone")
        elif pid is not None:
            say(f"{node.name}: not running (removing stale pid file)")
        if node not in victims:
            node.pid_path.unlink(missing_ok=True)
    if victims:
        say("stopping " + ", ".join(f"{n.name} (pid {p})" for n, p in victims.items()))
        _signal_all(victims, signal.SIGTERM)
        left = _wait_gone(victims, timeout)
        if left:
            say("still running after SIGTERM, killing: " + ", ".join(n.name for n in left))
            _signal_all(left, signal.SIGKILL)
            left = _wait_gone(left, 10.0)
        for node in victims:
            if node not in left:
                node.pid_path.unlink(missing_ok=True)
        if left:
            raise NodeError("could not stop " + ", ".join(f"{n.name} (pid {p})" for n, p in left.items()))
    return list(victims)


def down(nodes: list[Node] | None = None, timeout: float = 30.0, say: Say = print) -> list[Node]:
    """SIGTERM (then SIGKILL after ``timeout``) the nodes we started; return those stopped."""
    with locked():
        return _stop(known_nodes() if nodes is None else nodes, timeout, say)


def wipe(say: Say = print) -> None:
    """Delete all node data (refuses while a node runs)."""
    with locked():
        running = [n.name for n in known_nodes() if running_pid(n)]
        if running:
            raise NodeError(f"{', '.join(running)} still running; run `down` first")
        shutil.rmtree(config.nodes_dir(), ignore_errors=True)
        say(f"removed {config.nodes_dir()}")


# --- status ------------------------------------------------------------------

def node_status(node: Node) -> dict[str, Any]:
    pid = read_pid(node)
    running = pid is not None and alive(pid) and is_ours(pid, node)
    try:
        supported = protocol.handshake(node.address, config.CQL_PORT)
    except (OSError, protocol.ProtocolError, UnicodeDecodeError):
        supported = None
    return {
        "node": node.name,
        "address": f"{node.address}:{config.CQL_PORT}",
        "pid": pid,
        "alive": running,
        "cql": supported is not None,
        "cql_version": (supported or {}).get("CQL_VERSION", ["?"])[0],
        "rss_mb": rss_mb(pid) if running and pid is not None else None,
        "log": str(node.log_path),
        "up": running and supported is not None,
    }
