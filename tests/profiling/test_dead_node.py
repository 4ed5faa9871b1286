"""A node that dies under the harness: a node of this module's own (never the shared one), on
another loopback address with its own data folder, killed with SIGKILL while every pattern
runs against it at once.

Every run must end within a bounded time with its partial measurement marked interrupted (and
why), the sessions must skip what they had left and exit non-zero, and nothing they started
(run processes, pool workers, py-spy) may be left running.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from profiling.harness import patterns, runner, session, watchdog
from profiling.harness.client import default_reactor
from profiling.node import config, server
from profiling.node.config import Node
from tests.profiling.procs import group_gone

#: Out of ``make test`` (its runs and kills want the machine to themselves): ``make test-alone``, or
#: ``make test-killed-node`` for these alone.
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.alone, pytest.mark.killed_node]

ROOT = Path(__file__).resolve().parents[2]
KEYSPACE = "pyfactories_dead_node_test"
#: Seconds from the kill to a session's exit: the watchdog's detection (``future_full_throttle``
#: counts its failures only after sending everything: it is caught by the driver marking the node down,
#: or, while the driver still decodes the answers the node sent before it died, by the node refusing
#: connections) and grace, then
#: py-spy's file, the reports and the end of the session, with slack for a shared machine.
BOUND_S = max(watchdog.FAILING_S, watchdog.STALLED_S) + watchdog.GRACE_S + 45
#: The patterns, in groups run at once against one node, killed once per group: one group, every pattern
#: at once against one kill (each ends within seconds of it).
GROUPS = 1


def _free_address() -> str:
    """A loopback address (127.0.0.20 and up) whose CQL, storage and JMX ports are all free."""
    for last in range(20, 255 - config.MAX_NODES):
        address = f"127.0.0.{last}"
        ports = [(address, config.CQL_PORT), (address, config.STORAGE_PORT),
                 ("127.0.0.1", config.JMX_BASE_PORT + last - 1)]
        if not any(server._listening(host, port) for host, port in ports):
            return address
    raise RuntimeError("no free loopback address for a node of the test's own")


@pytest.fixture(scope="module")
def node_home(tmp_path_factory):
    """The environment of a node of this module's own: its folder and a free loopback address."""
    nodes_dir = tmp_path_factory.mktemp("own-node")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PYFACTORIES_NODES_DIR", str(nodes_dir))
        env.setenv("PYFACTORIES_FIRST_ADDRESS", _free_address())
        yield
    shutil.rmtree(nodes_dir, ignore_errors=True)


@pytest.fixture
def own_node(node_home):
    """(address, pid) of the module's node, started (again) for one test; killed by its PID after it."""
    _started, running = server.up(1, "512M", say=lambda _msg: None)
    node = Node(1)
    pid = server.running_pid(node)
    assert running == [node] and pid is not None
    try:
        # the schema and the rows the sessions read, made once (the sessions then find them)
        session.prepare_data(runner.Options(hosts=[node.address], patterns=[], factories=["tuple"], kinds=["read"],
                                            keyspace=KEYSPACE, connection_class=default_reactor()))
        yield node.address, pid
    finally:
        if server.running_pid(node) == pid:
            os.kill(pid, signal.SIGKILL)
        assert not server._wait_gone({node: pid}, 30)


def _session(address, out, pattern):
    args = [sys.executable, "-m", "profiling", "run", "-H", address, "--keyspace", KEYSPACE, "--out", str(out),
            "--node-warmup", "0",
            "--pattern", pattern, "--factory", "tuple", "--factory", "named_tuple", "--read", "-n", "10000000",
            "--concurrency", "20", "--profiler", "both" if pattern == "callback_full_pipeline" else "none"]
    return subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _dump(pid):
    """py-spy's dump of ``pid``'s threads (what a late run was doing), or why there is none."""
    try:
        return subprocess.run([str(Path(sys.executable).with_name("py-spy")), "dump", "--pid", str(pid)],
                              capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"(no dump of pid {pid}: {exc})"


class Watched:
    """A running session's output, read on a thread; the run's child PID once it measures."""

    def __init__(self, proc):
        self.proc, self.lines, self.child, self.ended = proc, [], None, None
        self.measuring = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        with self.proc.stdout:
            for line in self.proc.stdout:
                self.lines.append(line)
                found = re.search(r"measuring \(pid (\d+)", line)
                if found and self.child is None:
                    self.child = int(found.group(1))
                    self.measuring.set()
        self.proc.wait()
        self.ended = time.monotonic()


@pytest.mark.parametrize("group", range(GROUPS))
def test_killed_node_ends_every_pattern_in_bounded_time_with_partial_results(own_node, group, tmp_path,
                                                                            record_property):
    address, pid = own_node
    names = list(patterns.PATTERNS)[group::GROUPS]
    sessions = {name: Watched(_session(address, tmp_path / name, name)) for name in names}
    for name, s in sessions.items():
        if not s.measuring.wait(240):
            for other in sessions.values():
                other.proc.kill()
                other.reader.join()
            pytest.fail(f"{name} never started measuring:\n{''.join(s.lines)}")
    time.sleep(5)  # requests flowing in every run
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    for s in sessions.values():
        s.reader.join(max(1.0, killed + BOUND_S - time.monotonic()))
    late = [name for name, s in sessions.items() if s.ended is None]
    # what a late run's process was doing (py-spy's dump of its threads), before it is killed
    tails = {name: "".join(sessions[name].lines[-30:]) + _dump(sessions[name].child) for name in late}
    for name in late:
        sessions[name].proc.kill()
    assert not late, (f"still running {BOUND_S:.0f} s after the node was killed: {late}\n"
                      + "\n".join(f"--- {name}\n{tail}" for name, tail in tails.items()))
    took = {name: round(s.ended - killed, 1) for name, s in sessions.items()}
    print(f"seconds from the kill to each session's exit: {took}")
    record_property("kill_to_exit_s", took)
    for name, s in sessions.items():
        out, text = tmp_path / name, "".join(s.lines)
        assert s.proc.returncode == runner.EXIT_CLUSTER_GONE, text
        rows = json.loads((out / "summary.json").read_text())
        brief = [{k: r.get(k) for k in ("factory", "ops", "errors", "interrupted_reason", "failed", "warnings")}
                 for r in rows]
        assert len(rows) == 1, (brief, text[-4000:])  # the second combination was skipped
        (row,) = rows
        assert row["pattern"] == name and row["interrupted"], text
        # measured from before the kill to after it (a busy machine may not have finished a request before)
        assert re.match("requests failing|nothing answered", row["interrupted_reason"]), row
        assert row["wall_s"] > 0 and row["client_cpu_s"] > 0, row
        # failed requests counted, unless the node refused connections while none had ended (the run is
        # then abandoned with its requests still in flight: neither answered nor failed)
        assert row["errors"] > 0 or "no node accepted a connection" in row["interrupted_reason"], row
        for report in ("summary.md", "index.html"):
            assert "stopped answering" in (out / report).read_text() and "1 of 2 runs skipped" in text
        assert group_gone(s.child), f"{name}: processes of its run left behind"
        assert subprocess.run(["pgrep", "-f", str(out)], capture_output=True).returncode == 1, "py-spy left behind"
    spied = tmp_path / "callback_full_pipeline"
    if spied.exists():
        (row,) = json.loads((spied / "summary.json").read_text())
        assert (spied / row["artifacts"]["flamegraph"]).stat().st_size > 0  # the partial run's samples
