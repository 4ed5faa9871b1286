"""The end-to-end benchmark's runner without a server: which requests it sends, and that a failed
query or a short result stops the measurement with the reason."""

from types import SimpleNamespace

import pytest

from benchmarks import bench_e2e
from benchmarks.e2e.workloads import _params


class Statement:
    fetch_size = None

    def bind(self, params):
        return params


class Session:
    """Answers every request at once with ``rows`` rows; request number ``fail_at`` (1-based) fails."""

    def __init__(self, rows, fail_at=None):
        self.rows, self.fail_at, self.sent = rows, fail_at, []

    def prepare(self, query):
        return Statement()

    def execute_async(self, bound):
        self.sent.append(bound)
        failed = RuntimeError("server said no") if len(self.sent) == self.fail_at else None
        return Future([(0,)] * self.rows, failed)


class Future:
    def __init__(self, rows, exc):
        self.rows, self.exc = rows, exc

    def result(self):
        if self.exc:
            raise self.exc
        return SimpleNamespace(current_rows=self.rows)

    def add_callbacks(self, ok, err):
        err(self.exc) if self.exc else ok(self.rows)


@pytest.mark.parametrize("workload", ["single", "pages"])
def test_queries_take_the_parameters_in_turn_across_measurements(workload):
    w = bench_e2e.WORKLOADS[workload]
    session = Session(w.rows)
    runner = bench_e2e.Runner(session, w)
    params = _params(w.keys)
    cpu, wall, rows = runner.measure(7, "tuple")
    assert rows == 7 * w.rows and cpu >= 0 and wall > 0
    runner.measure(5, "tuple")
    assert session.sent == params[:12]


def test_the_first_failed_query_stops_the_measurement():
    w = bench_e2e.WORKLOADS["single"]
    session = Session(w.rows, fail_at=3)
    with pytest.raises(RuntimeError, match=r"single/named_tuple: 1 of 100 queries failed, the first with "
                                           r"RuntimeError: server said no"):
        bench_e2e.Runner(session, w).measure(100, "named_tuple")
    assert len(session.sent) == 3


def test_a_short_result_is_an_error():
    w = bench_e2e.WORKLOADS["pages"]
    with pytest.raises(RuntimeError, match=r"pages/dict: 1990 rows for 10 queries, expected 2000"):
        bench_e2e.Runner(Session(w.rows - 1), w).measure(10, "dict")


def test_each_measurement_binds_as_the_session_binds_then():
    """One statement, prepared once: the driver's bind on the driver's path, pyfactories' once the
    fast path binds the session's statements (a configuration applied after another), and the
    driver's again after."""
    from pyfactories import binding

    w = bench_e2e.WORKLOADS["single"]
    session = Session(w.rows)
    runner = bench_e2e.Runner(session, w)
    assert runner.binder() is Statement.bind
    runner.measure(2, "tuple")
    binding.install(session)
    assert runner.binder() is binding.bind
    binding.uninstall(session)
    assert runner.binder() is Statement.bind
    runner.measure(2, "tuple")
    assert session.sent == _params(w.keys)[:4]


def test_the_helpers_workload_goes_through_the_drivers_function_as_looked_up_then(monkeypatch):
    """``insert50_list``: the statements, bound in turn, through ``cassandra.concurrent.execute_concurrent``
    as it is when the measurement runs (where ``pyfactories.enable`` routes a session's calls), 50 in
    flight, the results as a list; a failed one stops the measurement with its reason."""
    from cassandra import concurrent

    w = bench_e2e.WORKLOADS["insert50_list"]
    calls = []

    def execute_concurrent(session, statements, concurrency, raise_on_first_error):
        calls.append((session, concurrency, raise_on_first_error, list(statements)))
        return [concurrent.ExecutionResult(True, SimpleNamespace(current_rows=[])) for _ in calls[-1][3]]

    monkeypatch.setattr(concurrent, "execute_concurrent", execute_concurrent)
    session = Session(0)
    runner = bench_e2e.Runner(session, w)
    assert runner.measure(7, "tuple")[2] == 0
    assert calls == [(session, 50, False, [(params, None) for params in _params(w.keys)[:7]])]
    monkeypatch.setattr(concurrent, "execute_concurrent", lambda session, statements, **_: [
        concurrent.ExecutionResult(False, RuntimeError("server said no")) for _ in statements])
    with pytest.raises(RuntimeError, match=r"insert50_list/tuple: 3 of 3 queries failed"):
        runner.measure(3, "tuple")
