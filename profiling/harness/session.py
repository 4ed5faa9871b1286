"""A profiling session around the harness's runs (:class:`profiling.harness.runner.Harness`): a cluster
(``--hosts``, or the local node, started if needed and then stopped), the workloads' data, every
run, the reports (written once, whatever interrupts the session) and the exit code, which every run
decides, repeats included: a run that failed or was interrupted makes it non-zero even when the
combination's row shows the figures of its other, complete repeats.
"""

from __future__ import annotations

import signal
from typing import Any

from cassandra.cluster import NoHostAvailable

from ..cluster import connect, reach
from ..report import publish
from . import warmup
from .client import connection_class
from .runner import EXIT_CLUSTER_GONE, SIGNALS, Harness, Options

#: How long the session waits for a cluster when it connects to load or drop its data.
CONNECT_TIMEOUT_S = 5.0


def _connect(opts: Options, **options: Any) -> tuple[Any, Any]:
    return connect(opts.contact(), connection_class=connection_class(opts.connection_class, opts.connection),
                   connect_timeout=CONNECT_TIMEOUT_S, control_connection_timeout=CONNECT_TIMEOUT_S, **options)


def prepare_data(opts: Options) -> None:
    """Create the keyspace and tables, load the partitions the selects read."""
    cluster, session = _connect(opts, **({"protocol_version": opts.protocol_version} if opts.protocol_version
                                         else {}))
    try:
        for kind in opts.kinds:
            opts.workload(kind).load(session)
    finally:
        cluster.shutdown()


def drop_data(opts: Options) -> None:
    try:
        cluster, session = _connect(opts)
    except Exception as exc:  # leaving data behind is no reason to lose the results
        print(f"[profiling] could not drop keyspace {opts.keyspace}: {exc}", flush=True)
        return
    try:
        session.execute(f"DROP KEYSPACE IF EXISTS {opts.keyspace}", timeout=60)
    except Exception as exc:
        print(f"[profiling] could not drop keyspace {opts.keyspace}: {exc}", flush=True)
    finally:
        cluster.shutdown()


def exit_code(harness: Harness) -> int:
    """The session's exit code: the stop's (a signal, a cluster gone), else 1 when any run, of any
    repeat, failed or was interrupted, else 0."""
    if harness.exit_code is not None:
        return harness.exit_code
    return 1 if any(r.get("failed") or r.get("interrupted_reason") for r in harness.runs) else 0


def run_session(opts: Options) -> int:
    """Data, every run, the reports; the exit code (:func:`exit_code`)."""
    harness = Harness(opts)
    written = False

    def interrupt(signum: int, _frame: Any) -> None:  # SIGTERM outside the runs: as Ctrl-C there
        harness._stop(SIGNALS[signum], 128 + signum)
        raise KeyboardInterrupt

    def report() -> None:
        nonlocal written
        write_reports(opts, harness.rows, harness.stop_reason, runs_made=len(harness.runs))
        written = True

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        with reach(opts.hosts, opts.port) as contact:
            opts.hosts, opts.port = contact.hosts, contact.port
            try:
                print(f"[profiling] cluster {contact}, keyspace {opts.keyspace}, output {opts.out}", flush=True)
                try:
                    prepare_data(opts)
                except NoHostAvailable as exc:
                    harness._stop(f"the cluster does not answer ({contact}): {exc}", EXIT_CLUSTER_GONE)
                    print(f"[profiling] {harness.stop_reason}", flush=True)
                else:
                    harness.run()
            except KeyboardInterrupt:
                harness._stop(SIGNALS[signal.SIGINT], 130)
            finally:
                try:
                    report()
                finally:
                    if not opts.keep_data and harness.exit_code != EXIT_CLUSTER_GONE:
                        drop_data(opts)
    except KeyboardInterrupt:  # while the data was dropped or the node started or stopped
        harness._stop(SIGNALS[signal.SIGINT], 130)
        if not written:  # what there is is reported, once
            report()
    finally:
        signal.signal(signal.SIGTERM, previous)
    return exit_code(harness)


def skipped(opts: Options, runs_made: int) -> str:
    """How many of the session's planned runs (repeats and the warm-up check included) were not made."""
    planned = len(opts.plan())
    return f"{max(0, planned - runs_made)} of {planned} runs skipped"


def write_reports(opts: Options, rows: list[dict[str, Any]], interrupted: str | None = None,
                  runs_made: int = 0) -> None:
    meta = {"command": opts.command, "driver": publish.driver_version(),
            "reactor": opts.connection_class, "connection": opts.connection, "ops per run": opts.num_ops,
            "requests": f"{opts.statement} statements, timeout "
                        f"{'none' if opts.request_timeout is None else f'{opts.request_timeout:g} s'}",
            "instrumentation": "on" if opts.instrumentation else "off",
            "py-spy": f"{opts.rate} Hz{', native' if opts.native else ''}" if opts.pyspy else "off",
            **warmup.settings(opts)}
    if interrupted:
        meta["interrupted"] = f"{interrupted}; {skipped(opts, runs_made)}"
    publish.publish(rows, opts.out, meta)
