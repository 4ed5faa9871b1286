"""The watchdog that ends a run whose requests fail or stall, and the node option that gives a
test a node of its own (pure: no node, no network)."""

import threading
import time
from types import SimpleNamespace

import pytest

from profiling.harness import patterns
from profiling.harness.patterns import Tally
from profiling.harness.watchdog import Watchdog
from profiling.node import config
from profiling.node.config import Node

FAST = {"failing_s": 0.5, "stalled_s": 1.0, "grace_s": 0.5}


def _feed(tally, stop, every_s, outcome, until):
    """Count an outcome every ``every_s`` until ``until`` (or the stop event) is set."""
    while not (stop.is_set() or until.is_set()):
        outcome(tally)
        time.sleep(every_s)


def _run(outcome, seconds=8.0, **kw):
    """The watchdog over a feeder of ``outcome``: (watchdog, stop event, seconds until it stopped the
    run or ``seconds`` passed). Far past the fast limits: a busy machine runs its polls late."""
    tally, stop, until = Tally(), threading.Event(), threading.Event()
    feeder = threading.Thread(target=_feed, args=(tally, stop, 0.01, outcome, until))
    t0 = time.monotonic()
    with Watchdog(tally, stop, **{**FAST, **kw}) as dog:
        feeder.start()
        stop.wait(seconds)
        until.set()
        feeder.join()
    return dog, stop, time.monotonic() - t0


def test_failing_requests_stop_the_run_with_the_reason():
    dog, stop, took = _run(lambda t: t.error(ConnectionError("node gone")))
    assert stop.is_set() and took < 4.5
    assert dog.reason.startswith("requests failing:") and "ConnectionError" in dog.reason


def test_failures_between_successes_are_not_a_reason_to_stop():
    flip = iter(range(10**9))
    dog, stop, _ = _run(lambda t: t.success() if next(flip) % 2 else t.error(ValueError("one bad row")), seconds=3.0)
    assert not stop.is_set() and dog.reason is None


def test_nothing_moving_is_a_stall():
    dog, stop, took = _run(lambda t: None)
    assert stop.is_set() and 0.9 < took < 6.0
    assert dog.reason.startswith("nothing answered")


def test_progress_counts_as_movement():
    ticks = iter(range(10**9))
    dog, stop, _ = _run(lambda t: None, seconds=2.0, progress=lambda: next(ticks))
    assert not stop.is_set() and dog.reason is None


def test_requests_being_sent_count_as_movement():
    dog, stop, _ = _run(lambda t: t.sending(), seconds=2.0)
    assert not stop.is_set() and dog.reason is None


def test_requests_sent_while_no_host_is_up_are_not_movement():
    dog, stop, took = _run(lambda t: t.sending(), reachable=lambda: False, failing_s=10.0)
    assert stop.is_set() and 0.9 < took < 6.0 and dog.reason.startswith("nothing answered")


def test_no_host_up_for_the_failing_time_stops_the_run():
    """A pattern that counts its failures only once it has sent everything (``future_full_throttle``)
    sees none while the driver holds no host up: that is a dead node, not a stall to wait out."""
    up = iter([True] * 2)
    dog, stop, took = _run(lambda t: t.sending(), reachable=lambda: next(up, False), stalled_s=30.0)
    assert stop.is_set() and took < 4.5
    assert dog.reason.startswith("requests failing: no host up for")


def test_a_host_down_for_less_than_the_failing_time_is_not_a_reason_to_stop():
    flaps = iter(range(10**9))
    dog, stop, _ = _run(lambda t: t.sending(), seconds=2.0, reachable=lambda: next(flaps) % 4 != 0)
    assert not stop.is_set() and dog.reason is None


class Answered:
    """A request that has already ended, as a driver future."""

    def result(self):
        return []


def test_a_long_submission_is_not_a_stall():
    """``future_full_throttle`` counts no end until it has sent every request: sending for longer
    than the stall limit, uninstrumented (no decodes to count), on a node that answers, is no stall."""
    tally, stop = Tally(), threading.Event()

    def execute_async(statement):
        time.sleep(0.01)  # the request path of a busy client
        return Answered()

    ctx = patterns.Context(SimpleNamespace(execute_async=execute_async), lambda i: i, stop=stop, tally=tally)
    with Watchdog(tally, stop, **FAST) as dog:
        patterns.future_full_throttle(ctx, range(200))  # about 2 s of sending: twice the stall limit
    assert dog.reason is None and not stop.is_set()
    assert (tally.sent, tally.ok) == (200, 200)


def test_a_pattern_that_does_not_return_is_abandoned_with_the_reason():
    tally, stop, abandoned, gone = Tally(), threading.Event(), [], threading.Event()
    t0 = time.monotonic()
    with Watchdog(tally, stop, on_abandon=lambda reason: (abandoned.append(reason), gone.set()), **FAST):
        tally.error(ConnectionError("node gone"))
        assert gone.wait(30)  # a pattern stuck on a request that never ends
    assert time.monotonic() - t0 >= FAST["failing_s"] + FAST["grace_s"]
    assert stop.is_set() and len(abandoned) == 1
    assert abandoned[0].startswith("requests failing") and "abandoned after" in abandoned[0]


def test_a_node_of_its_own_on_another_address(monkeypatch, tmp_path):
    monkeypatch.setenv("PYFACTORIES_NODES_DIR", str(tmp_path))
    monkeypatch.setenv("PYFACTORIES_FIRST_ADDRESS", "127.0.0.21")
    first, second = Node(1), Node(2)
    assert (first.address, second.address) == ("127.0.0.21", "127.0.0.22")
    assert (first.jmx_port, second.jmx_port) == (config.JMX_BASE_PORT + 20, config.JMX_BASE_PORT + 21)
    assert first.root == tmp_path / "node1"
    yaml = config.cassandra_yaml(second)
    assert "listen_address: 127.0.0.22" in yaml and '"127.0.0.21:7000"' in yaml  # node 1 is the seed
    assert str(tmp_path / "node2" / "data") in yaml


@pytest.mark.parametrize("bad", ["10.0.0.1", "127.0.0.0", "127.0.0.250", "localhost"])
def test_a_bad_first_address_is_refused(monkeypatch, bad):
    monkeypatch.setenv("PYFACTORIES_FIRST_ADDRESS", bad)
    with pytest.raises(ValueError, match="PYFACTORIES_FIRST_ADDRESS"):
        Node(1).address


def _sending(tally):
    tally.sending()


def test_requests_sent_and_none_answered_is_a_stall_where_responses_are_counted():
    # a pattern that counts outcomes only once it has sent everything, its node gone: sends go on
    dog, stop, took = _run(_sending, progress=lambda: 7, progress_is_answers=True)
    assert stop.is_set() and 0.9 < took < 6.0
    assert dog.reason == "nothing answered for 1 s (requests sent, no response decoded, none ended)"


@pytest.mark.parametrize("progress, answers", [(lambda: 7, False), (lambda: 0, True)])
def test_requests_sent_count_as_movement_where_responses_are_not_counted(progress, answers):
    # tasks of other processes, or no instrumentation (nothing decoded is counted): sending is all it sees
    dog, stop, _ = _run(_sending, seconds=2.0, progress=progress, progress_is_answers=answers)
    assert not stop.is_set() and dog.reason is None


def test_responses_decoded_while_sending_are_answers():
    ticks = iter(range(10**9))
    dog, stop, _ = _run(_sending, seconds=2.0, progress=lambda: next(ticks), progress_is_answers=True)
    assert not stop.is_set() and dog.reason is None


def test_no_node_accepting_connections_while_none_ends_stops_the_run():
    """``future_full_throttle`` sending while the driver still decodes a backlog the node sent before it
    died: responses decoded, the host up in the driver's eyes, but the node refuses connections."""
    ticks = iter(range(10**9))
    probes = []
    dog, stop, took = _run(_sending, progress=lambda: next(ticks), progress_is_answers=True, stalled_s=30.0,
                           probe=lambda: probes.append(time.monotonic()) or False)
    assert stop.is_set() and 0.9 < took < 6.0, took
    assert dog.reason.startswith("requests failing: no node accepted a connection for")
    assert dog.reason.endswith("and no request ended")
    assert all(b - a >= 0.9 for a, b in zip(probes, probes[1:]))  # at most once a second


def test_a_node_that_accepts_connections_or_requests_that_end_are_not_probed_away():
    ticks = iter(range(10**9))
    dog, stop, _ = _run(_sending, seconds=2.5, progress=lambda: next(ticks), progress_is_answers=True,
                        probe=lambda: True)
    assert not stop.is_set() and dog.reason is None
    probes = []
    dog, stop, _ = _run(lambda t: t.success(), seconds=2.5, probe=lambda: probes.append(1) or False)
    assert not stop.is_set() and dog.reason is None and probes == []


def test_the_probe_tries_each_known_node_until_one_accepts(monkeypatch):
    from profiling.harness import child

    hosts = [SimpleNamespace(endpoint=SimpleNamespace(address="127.0.0.1", port=port)) for port in (1, 2)]
    runner = SimpleNamespace(client=SimpleNamespace(cluster=SimpleNamespace(metadata=SimpleNamespace(
        all_hosts=lambda: hosts))))
    tried = []

    def connect(address, timeout):
        tried.append(address)
        if address[1] == 1:
            raise ConnectionRefusedError
        return SimpleNamespace(close=lambda: None)

    monkeypatch.setattr(child.socket, "create_connection", connect)
    assert child.InProcess.accepts(runner) is True and tried == [("127.0.0.1", 1), ("127.0.0.1", 2)]
    hosts.pop()
    assert child.InProcess.accepts(runner) is False
