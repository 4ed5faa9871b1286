"""One profiled client: a Cluster/Session built from a run spec, instrumented.

Used by the run's child process and by each worker of the multiprocess
patterns (which must build their own Session after they start).
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import signal
from dataclasses import dataclass
from typing import Any, Callable

from ..timing import hooks, instrument
from .patterns import Context
from .spec import RunSpec

#: --connection-class name -> (module, class, extra module the reactor needs)
REACTORS = {
    "libev": ("cassandra.io.libevreactor", "LibevConnection", None),
    "asyncio": ("cassandra.io.asyncioreactor", "AsyncioConnection", None),
    "twisted": ("cassandra.io.twistedreactor", "TwistedConnection", "twisted"),
}

_GREEN = ("connection class {0!r} is not offered: the driver's {0} reactor needs every process "
          "monkey-patched before anything else is imported (the harness, each run's process, its pool "
          "workers), the instrumentation cannot see a green event loop, and cassandra-driver 3.30 "
          "deprecates it (gone in 3.31 and from scylla-driver); use libev or asyncio")
#: Connection classes the driver has and the harness refuses, with the reason.
REFUSED = {name: _GREEN.format(name) for name in ("gevent", "eventlet")}

#: --connection: the reactor's own connection class (the driver's), or pyfactories' subclass of it
#: (``connection.cluster_options()``: its timer service, compiled framing and coalesced writes).
CONNECTIONS = ("driver", "pyfactories")
#: reactor -> the name of pyfactories' class for it in ``pyfactories.connection``.
OURS = {"libev": "TimerQueueLibevConnection", "asyncio": "TimerQueueAsyncioConnection"}


class ReactorUnavailable(RuntimeError):
    pass


def reactor_problem(name: str) -> str | None:
    """Why ``--connection-class name`` cannot be used here, or None if it can."""
    if name in REFUSED:
        return REFUSED[name]
    if name not in REACTORS:
        return f"unknown connection class {name!r}; choose one of {', '.join(REACTORS)}"
    module, _cls, extra = REACTORS[name]
    if extra and importlib.util.find_spec(extra) is None:
        return f"connection class {name!r} needs the {extra!r} package: pip install {extra}"
    if importlib.util.find_spec(module) is None:
        from pyfactories import _driver

        return f"connection class {name!r} is not in this driver ({_driver.distribution()} has no {module})"
    try:
        importlib.import_module(module)
    except Exception as exc:
        hint = (" (the driver was built without its libev extension: install libev-dev "
                "(Debian/Ubuntu) or libev-devel, then reinstall cassandra-driver from source)"
                if name == "libev" else "")
        return f"connection class {name!r} does not load: {exc}{hint}"
    return None


def default_reactor() -> str:
    return "libev" if reactor_problem("libev") is None else "asyncio"


def connection_problem(reactor: str, connection: str = "driver") -> str | None:
    """Why ``--connection-class reactor --connection connection`` cannot be used here, or None."""
    problem = reactor_problem(reactor)
    if problem or connection == "driver":
        return problem
    if connection not in CONNECTIONS:
        return f"unknown connection {connection!r}; choose one of {', '.join(CONNECTIONS)}"
    if reactor not in OURS:
        return (f"pyfactories has no connection class for the {reactor} reactor "
                f"(it has one for {' and '.join(OURS)}); use --connection driver")
    try:
        from pyfactories import connection as ours
    except Exception as exc:
        return f"pyfactories' connection classes do not load: {exc}"
    why = ours.DRIVER_UNSUPPORTED or (ours.LIBEV_UNAVAILABLE if reactor == "libev" else ours.ASYNCIO_UNAVAILABLE)
    return f"pyfactories' connection class is off: {why}" if why else None


def connection_class(name: str, connection: str = "driver") -> type:
    """The class a run's cluster connects with: reactor ``name``'s, the driver's or pyfactories'."""
    problem = connection_problem(name, connection)
    if problem:
        raise ReactorUnavailable(problem)
    if connection == "pyfactories":
        return getattr(importlib.import_module("pyfactories.connection"), OURS[name])
    module, cls, _extra = REACTORS[name]
    return getattr(importlib.import_module(module), cls)


def allow_profiling() -> None:
    """Let py-spy (a sibling process, not our parent) attach under Yama ptrace_scope=1.

    PR_SET_PTRACER_ANY; a no-op where Yama or prctl is absent.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(0x59616D61, ctypes.c_ulong(-1 & 0xFFFFFFFFFFFFFFFF), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def die_with_parent() -> None:
    """SIGTERM when the parent dies (Linux), so an orphaned run does not go on."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


@dataclass
class Client:
    cluster: Any
    session: Any
    recorder: instrument.Recorder  # counts nothing when not instrumented, but still reads the CPU clocks
    request: Callable[[int], Any]
    request_timeout: float | None
    instrumented: bool = True

    def context(self, **options: Any) -> Context:
        """A pattern's context for this client: its requests, their timeout, and blocking
        calls timed as ``wait`` when instrumented."""
        if self.instrumented:
            options["wait"] = self.recorder.wait
        return Context(self.session, self.request, request_timeout=self.request_timeout, **options)

    def parts(self) -> dict[str, bool]:
        """Which of pyfactories' parts this client's session runs (``pyfactories.status``)."""
        import pyfactories

        return {name: part.on for name, part in pyfactories.status(self.session).items()}

    def close(self) -> None:
        self.cluster.shutdown()


#: How long the measured client may take to connect (the driver's defaults are 5 s, 2 s for the control
#: connection): its connecting is not measured.
CONNECT_TIMEOUT_S = 15.0


def open_client(spec: RunSpec) -> Client:
    """Connect, apply the row factory, instrument (unless the spec says not to), prepare the
    workload's statement."""
    from ..cluster import open_cluster
    from ..factories import resolve

    options: dict[str, Any] = {"connection_class": connection_class(spec.connection_class, spec.connection),
                               "request_timeout": spec.request_timeout,
                               # connecting is not measured: a loaded machine must not fail the run there
                               "connect_timeout": CONNECT_TIMEOUT_S, "control_connection_timeout": CONNECT_TIMEOUT_S}
    if spec.protocol_version:
        options["protocol_version"] = spec.protocol_version
    factory = resolve(spec.factory)
    cluster = open_cluster(spec.contact(), **options)
    try:
        factory.before_connect(cluster)  # a whole-client configuration: pyfactories.enable(cluster)
        session = cluster.connect()
        factory.apply(session)
        recorder = instrument.Recorder()
        if spec.instrumentation:
            hooks.instrument_session(session, recorder)
            request = spec.workload.requests(session, lambda bind: instrument.timed_bind(recorder, bind))
        else:
            request = spec.workload.requests(session, lambda bind: bind)
    except BaseException:
        cluster.shutdown()
        raise
    return Client(cluster, session, recorder, request, spec.request_timeout, spec.instrumentation)


def warm_up(client: Client, ops: int) -> None:
    """A few requests first: connections, prepared statements and caches get warm.

    Uses operation numbers past the measured ones' start, so writes land in the
    same partitions; failures here surface in the measured run, not here.
    """
    from cassandra.concurrent import execute_concurrent

    if ops > 0:
        execute_concurrent(client.session, ((client.request(i), None) for i in range(ops)),
                           concurrency=min(ops, 50), raise_on_first_error=False)
