"""The asyncio end-to-end benchmark without a node: its configurations and command line, the bridge
from the driver's callbacks into asyncio futures, the coroutines that measure, and its table."""

import asyncio
import sys
import threading

import pytest

from benchmarks import bench_asyncio, bench_e2e
from benchmarks.e2e import asyncio_clients, clients as e2e_clients
from benchmarks.e2e.asyncio_clients import CONFIGS, DriverAsyncioClient
from benchmarks.e2e.workloads import WORKLOADS, QueriesFailed

ALL = ["driver+bridge", "everything_on+bridge", "everything_on+await", "acsylla"]


def names(configs):
    return [c.name for c in configs]


def test_the_bridge_comes_first_and_each_configuration_counts_once():
    assert names(asyncio_clients.resolve_all()) == ALL
    assert names(asyncio_clients.resolve_all(["acsylla", "everything_on+await", "acsylla"])) == [
        "driver+bridge", "acsylla", "everything_on+await"]
    with pytest.raises(ValueError, match="unknown asyncio configuration.*everything_on, tuple.*choose of driver"):
        asyncio_clients.resolve_all(["everything_on", "tuple"])
    # one process each, pyfactories enabled on both everything_on ones, rows awaited three ways
    assert len({c.connection for c in CONFIGS.values()}) == 4
    assert [c.enabled for c in CONFIGS.values()] == [False, True, True, False]
    assert [c.how for c in CONFIGS.values()] == ["bridge", "bridge", "await", "peer"]
    # the rounds take them as they take bench_e2e's: no row factory to apply, every workload runnable
    assert all(c.factory is None and c.runs("insert1") and not c.runs("nope") for c in CONFIGS.values())


def test_a_peer_that_does_not_import_is_left_out_with_a_note(monkeypatch):
    assert asyncio_clients.usable(asyncio_clients.resolve_all()) == (asyncio_clients.resolve_all(), [])
    monkeypatch.setitem(sys.modules, "acsylla", None)  # import acsylla now raises ImportError
    kept, notes = asyncio_clients.usable(asyncio_clients.resolve_all())
    assert names(kept) == ALL[:3]
    assert len(notes) == 1 and notes[0].startswith("`acsylla` skipped: acsylla is not importable")


def test_the_command_line_takes_configurations_workloads_and_the_loop(monkeypatch):
    _, spec = bench_asyncio.parse_args(["--configs", "acsylla", "--workloads", "single,insert1", "--loop", "uvloop",
                                        "--rounds", "7", "--client-cpus", "1"])
    assert spec["configs"] == ["driver+bridge", "acsylla"] and spec["workloads"] == ["single", "insert1"]
    assert spec["loop"] == "uvloop" and spec["rounds"] == 7 and spec["client_cpus"] == [1]
    _, spec = bench_asyncio.parse_args([])
    assert spec["configs"] == ALL and spec["loop"] == "asyncio"
    assert spec["workloads"] == ["single", "single50", "pages", "insert1", "insert50"]
    assert [(WORKLOADS[w].in_flight, WORKLOADS[w].rows) for w in spec["workloads"]] == [
        (1, 1), (50, 1), (50, 200), (1, 0), (50, 0)]
    monkeypatch.setattr(bench_asyncio.reference, "cpus", lambda: ([1], [0]))
    _, spec = bench_asyncio.parse_args(["--size", "full"])
    assert (spec["client_cpus"], spec["server_cpus"], spec["rounds"]) == ([1], [0], 21)


@pytest.mark.parametrize("argv, message", [
    (["--configs", "driver+bridge,tuple"], "unknown asyncio configuration(s) tuple"),
    (["--workloads", "single,selects"], "unknown workload(s) selects"),
    (["--loop", "trio"], "invalid choice: 'trio'"),
    (["--hosts", "10.0.0.1", "--server-cpus", "0"], "cannot pin the servers named by --hosts"),
])
def test_bad_options_are_an_error_that_says_why(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        bench_asyncio.parse_args(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_uvloop_asked_for_where_it_does_not_import_is_an_error(monkeypatch, capsys):
    assert asyncio_clients.loop_unavailable("uvloop") is None  # installed by the dev extra
    monkeypatch.setitem(sys.modules, "uvloop", None)
    with pytest.raises(SystemExit):
        bench_asyncio.parse_args(["--loop", "uvloop"])
    assert "uvloop is not importable" in capsys.readouterr().err
    assert "unknown loop 'trio'" in asyncio_clients.loop_unavailable("trio")


def test_the_bridge_hands_rows_and_errors_from_another_thread_to_the_loop_unless_cancelled():
    loop = asyncio.new_event_loop()
    try:
        async def bridged(outcome, cancel=False):
            aio_future = loop.create_future()
            callback = asyncio_clients._error_to_loop if isinstance(outcome, Exception) else asyncio_clients._rows_to_loop
            if cancel:
                aio_future.cancel()
            io_thread = threading.Thread(target=callback, args=(outcome, loop, aio_future))
            io_thread.start()
            io_thread.join()
            await asyncio.sleep(0)  # the loop runs what the thread handed it
            return aio_future

        assert loop.run_until_complete(bridged([(1, 2)])).result() == [(1, 2)]
        failed = loop.run_until_complete(bridged(ValueError("timed out")))
        with pytest.raises(ValueError, match="timed out"):
            failed.result()
        # a cancelled future is left as it is (setting it would raise InvalidStateError in the loop)
        handled = []
        loop.set_exception_handler(lambda _loop, context: handled.append(context))
        assert loop.run_until_complete(bridged([(1, 2)], cancel=True)).cancelled()
        assert loop.run_until_complete(bridged(ValueError("late"), cancel=True)).cancelled()
        assert handled == []
    finally:
        loop.close()


def measured(workload, request, count=len):
    loop = asyncio.new_event_loop()
    try:
        return e2e_clients.measure_chains(loop, WORKLOADS[workload], range(100, 100 + 120), request, count, "probe")
    finally:
        loop.close()


def test_the_coroutines_take_each_query_once_with_as_many_in_flight_as_the_workload_asks():
    for workload, in_flight in (("single", 1), ("pages", 50)):
        taken, flying, most = [], [0], [0]

        async def request(i):
            taken.append(i)
            flying[0] += 1
            most[0] = max(most[0], flying[0])
            await asyncio.sleep(0)
            flying[0] -= 1
            return [()] * WORKLOADS[workload].rows

        cpu, wall = measured(workload, request)
        assert sorted(taken) == list(range(100, 220)) and most[0] == in_flight
        assert cpu > 0 and wall > 0


def test_a_failed_query_or_a_wrong_row_count_fails_the_measurement():
    async def failing(i):
        if i % 7 == 0:
            raise TimeoutError(f"query {i} timed out")
        return [()] * 200

    with pytest.raises(QueriesFailed, match=r"pages/probe: \d+ queries failed, the first with TimeoutError: query"):
        measured("pages", failing)

    async def one_row_short(i):
        return [()] * 199

    with pytest.raises(RuntimeError, match="pages/probe: 23880 rows for 120 queries, expected 24000"):
        measured("pages", one_row_short)


class Future:
    """A request's future that has its rows already, not awaitable (as the driver's)."""

    def result(self):
        return []


class AwaitableFuture(Future):
    def __await__(self):
        return iter(())


def test_the_await_configuration_is_unavailable_where_the_futures_cannot_be_awaited():
    found = {}
    for future in (Future(), AwaitableFuture()):
        client = DriverAsyncioClient.__new__(DriverAsyncioClient)  # around a stand-in session, unconnected
        client.loop = asyncio.new_event_loop()
        client.session = type("Session", (), {"execute_async": lambda self, query, future=future: future})()
        try:
            found[type(future).__name__] = client._why_not_awaitable()
        finally:
            client.loop.close()
    assert found["AwaitableFuture"] is None
    assert found["Future"].startswith("the futures an enabled session hands out (Future) cannot be awaited")
    assert "'await' expression" in found["Future"]


class Client:
    """Answers a configuration's segment with a fixed CPU per query, and as many queries a second."""

    def __init__(self, cpu_per_query):
        self.cpu, self.description = cpu_per_query, "stand-in"

    def measure(self, workload, factory, n):
        assert factory is None  # no row factory to apply in an asyncio configuration
        return self.cpu * n, self.cpu * n


def section():
    configs = asyncio_clients.resolve_all(["everything_on+bridge", "acsylla"])
    clients = {c.connection: Client(cpu) for c, cpu in zip(configs, (100e-6, 40e-6, 50e-6))}
    cases = [bench_e2e.bench_workload(None, WORKLOADS[w], [], 3, 0.01, say=lambda _m: None, clients=clients,
                                      configs=configs) for w in ("single", "pages")]
    return {"depth": "asyncio", "config": {"rounds": 3, "loop": "uvloop", "client_cpus": [1], "server_cpus": [0]},
            "cassandra": {"version": "5.0.9", "protocol_version": 5},
            "configurations": {c.name: {"words": c.words, "client": "stand-in"} for c in configs},
            "notes": ["`everything_on+await` unavailable: cannot be awaited"], "cases": cases}


def test_the_table_has_a_row_per_workload_and_configuration_with_ratios_to_the_bridge():
    text = bench_asyncio.render(section())
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in text.splitlines() if ln.startswith("| ")]
    assert rows[0] == ["workload", "in flight", "configuration", "CPU/query", "queries/s", "CPU vs. driver+bridge",
                       "queries/s vs. driver+bridge"]
    assert [r[:3] for r in rows[1:]] == [[w, n, c] for w, n in (("single", "1"), ("pages", "50"))
                                         for c in ("driver+bridge", "everything_on+bridge", "acsylla")]
    assert rows[1][3:] == ["100.0 µs", "10000", "1.00x (1.00–1.00)", "1.00x (1.00–1.00)"]
    assert rows[2][3:] == ["40.0 µs", "25000", "0.40x (0.40–0.40)", "2.50x (2.50–2.50)"]
    assert rows[6][5] == "0.50x (0.50–0.50)"
    assert "uvloop loop; 3 interleaved rounds, medians; client pinned to CPU 1; server pinned to CPU 0" in text
    assert "Note: `everything_on+await` unavailable: cannot be awaited." in text


def test_a_run_with_no_cases_says_so_with_its_notes():
    text = bench_asyncio.render({"notes": ["`acsylla` skipped: not importable"], "cases": []})
    assert "Not run: no workloads." in text and "Note: `acsylla` skipped: not importable." in text
