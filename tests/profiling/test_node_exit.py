"""The node tool's exit watch: a local node that exits mid-run is named, with the JVM's last words.

A stand-in process carries a node's command-line marks (the tool recognises its nodes by them), so
no server is needed: what is checked is the bookkeeping around the PID and the logs.
"""

import os
import signal
import subprocess
import sys

import pytest

from profiling import node
from profiling.node import config, server
from profiling.node.config import Node

OOM = "Terminating due to java.lang.OutOfMemoryError: Java heap space"


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """A process that passes for node 1 of a nodes folder of its own; killed after the test."""
    monkeypatch.setenv("PYFACTORIES_NODES_DIR", str(tmp_path / "nodes"))
    monkeypatch.delenv("PYFACTORIES_HOSTS", raising=False)
    one = Node(1)
    one.path("logs").mkdir(parents=True)
    one.stdout_path.write_text("=== starting node1 ===\nWARNING: an old warning\n")
    one.log_path.write_text("ERROR [main] an error from before the watch\n")
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", config.MAIN_CLASS,
                             one.config_marker])
    one.pid_path.write_text(f"{proc.pid}\n")
    try:
        yield one, proc
    finally:
        proc.kill()
        proc.wait()


def test_quiet_while_the_node_runs(stand_in):
    one, proc = stand_in
    check = node.exit_watch()
    assert server.running_pid(one) == proc.pid
    assert check() is None
    assert check() is None


def test_a_pid_reused_after_a_node_this_process_started_is_read_afresh(stand_in, monkeypatch):
    """A node this process started and reaped leaves its PID free; the system may give it to the
    next process, which is then judged by what it is, not by the old child's exit."""
    one, proc = stand_in
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    monkeypatch.setitem(server._CHILDREN, proc.pid, finished)
    assert server.running_pid(one) == proc.pid
    assert proc.pid not in server._CHILDREN


def test_names_the_node_and_its_last_words_once_it_exits(stand_in, monkeypatch, tmp_path):
    one, proc = stand_in
    check = node.exit_watch()
    with one.stdout_path.open("a") as out:
        out.write(f"WARNING: a warning of this run\n{OOM}\n")
    with one.log_path.open("a") as log:
        log.write("INFO  [main] fine\nERROR [Native-Transport] a request failed\n")
    logs = one.log_path.parent
    monkeypatch.setenv("PYFACTORIES_NODES_DIR", str(tmp_path / "elsewhere"))  # paths were taken at the start
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    said = check()
    assert said is not None and said.startswith(f"node1 (pid {proc.pid}) exited during the run")
    assert OOM in said and "ERROR [Native-Transport] a request failed" in said
    assert "before the watch" not in said and "WARNING" not in said
    assert f"(its logs: {logs})" in said


def test_a_node_that_was_not_running_is_not_watched(stand_in):
    one, proc = stand_in
    proc.kill()
    proc.wait()
    assert node.exit_watch()() is None


def test_external_hosts_are_not_watched(stand_in, monkeypatch):
    monkeypatch.setenv("PYFACTORIES_HOSTS", "127.0.0.1")
    check = node.exit_watch()
    os.kill(stand_in[1].pid, signal.SIGKILL)
    stand_in[1].wait()
    assert check() is None


def test_extra_jvm_flags_come_from_the_environment_before_the_main_class(monkeypatch, tmp_path):
    monkeypatch.setenv("PYFACTORIES_NODES_DIR", str(tmp_path / "nodes"))
    monkeypatch.delenv("PYFACTORIES_NODE_JVM_FLAGS", raising=False)
    plain = config.server_command("java", Node(1), "1G")
    monkeypatch.setenv("PYFACTORIES_NODE_JVM_FLAGS", " -XX:TieredStopAtLevel=1  -XX:CICompilerCount=2 ")
    tuned = config.server_command("java", Node(1), "1G")
    assert "-XX:TieredStopAtLevel=1" not in plain
    added = [flag for flag in tuned if flag not in plain]
    assert added == ["-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=2"]
    assert tuned.index("-XX:CICompilerCount=2") < tuned.index("-cp") < tuned.index(config.MAIN_CLASS)


def test_a_process_still_in_exec_is_read_once_its_command_line_shows(monkeypatch):
    """Right after ``Popen`` returns, the child may still be in exec, its command line empty: asked
    again, not taken for another program."""
    answers = [b"", b"", f"java {config.MAIN_CLASS} x\0".encode()]
    monkeypatch.setattr(server.Path, "read_bytes", lambda self: answers.pop(0) if answers else b"")
    assert config.MAIN_CLASS in server._cmdline(12345) and answers == []
    assert server._cmdline(12345) == ""  # (an empty one for good, e.g. a zombie's, stays empty)
