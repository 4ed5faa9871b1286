"""A process pool (the multiprocessing write-up's pattern: one Session per worker, created after the fork in the pool
initializer) returns named rows, from ``cached_named_tuple_factory`` and from the fast path, to the
parent: they unpickle to rows equal to those the parent reads itself."""

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from cassandra.query import SimpleStatement

from . import pool_worker
from .support import assert_same_rows

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def worker_results(method, contact, config, tmp_path):
    """``(parent pid, [(worker pid, rows)])`` of a pool started by ``method``."""
    if method == "forkserver":
        # This process already runs driver threads: the workers fork from a fresh fork server instead.
        return os.getpid(), pool_worker.run_pool("forkserver", contact.hosts, contact.port, 5, config)
    # "fork": from a fresh interpreter that has created no Cluster before forking.
    out = tmp_path / "rows.pickle"
    done = subprocess.run(
        [sys.executable, "-W", "error", "-m", "tests.integration.pool_worker", "--config", config,
         "--hosts", ",".join(contact.hosts), "--port", str(contact.port), "--start-method", "fork", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    data = pickle.loads(out.read_bytes())
    return data["parent"], data["results"]


@pytest.mark.parametrize("config", pool_worker.CONFIGS)
@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_pool_returns_named_rows(clusters, contact, schema, tmp_path, method, config):
    parent, results = worker_results(method, contact, config, tmp_path)
    assert len(results) == len(pool_worker.POOL_KEYS)
    assert all(pid not in (parent, os.getpid()) for pid, _ in results)
    ours = clusters.target(5, "profile", "c.named")
    driver = clusters.driver(5, "named")
    for pk, (_pid, rows) in zip(pool_worker.POOL_KEYS, results):
        assert rows and all(type(row).__name__ == "Row" for row in rows)
        assert_same_rows(rows, list(ours.execute(ours.prepare(pool_worker.POOL_SELECT), (pk,))))
        assert_same_rows(rows, list(driver.execute(driver.prepare(pool_worker.POOL_SELECT), (pk,))))
        first = pool_worker.POOL_COLUMNS.index('"1st"')
        assert type(rows[0])._fields[first] == f"field_{first}_"  # "1st": the driver's positional fallback name
        # and they cross a process boundary again
        assert_same_rows(pickle.loads(pickle.dumps(rows)), rows)


def test_the_drivers_own_rows_do_not_pickle(clusters, schema):
    """Why the pool needs our rows: the driver's named_tuple_factory rows cannot be pickled."""
    driver = clusters.driver(5, "named")
    row = driver.execute(SimpleStatement(pool_worker.POOL_SELECT.replace("?", "1"))).one()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError), match="Row"):
        pickle.dumps(row)
