"""Inside a process that ``python -m profiling record`` started: the instrumented method on
every Session the program creates, without changing its code.

Loaded by path from the ``sitecustomize`` that :mod:`profiling.service.record` puts first on the
program's ``PYTHONPATH`` (so the program's own modules are never shadowed), with
``profiling/timing/instrument.py`` loaded the same way. Nothing of the driver is imported early
(a program that monkey-patches first keeps its order): an import hook waits for
``cassandra.cluster`` and then

* wraps, as each request is sent, the row factory and protocol handler its future will use
  in the instrumentation's timed versions (cached, so each is made once): a factory set
  after ``connect``, on an execution profile or by ``pyfactories.enable`` is timed as well;
  the wrapped factory compares equal to the original, so the driver's own checks
  (``was_applied``) still recognise it;
* installs, on each Session ``Cluster.connect`` returns, the harness's driver hooks
  (:func:`profiling.timing.hooks.install`: framing, dispatch, timers, the request path), guarded:
  a driver they do not fit (an old one without ``_enable_checksumming``) keeps running
  untimed there, with a warning in the totals;
* counts, per row factory, the calls and rows, and keeps one result to measure the factory
  in use against pyfactories' compiled ones at exit (:mod:`profiling.timing.factorycost`);
* counts the requests sent and those with a client-side timeout (a timer each);
* snapshots the clocks before each ``Cluster.shutdown`` and at exit (before the driver's own
  exit handlers stop its event loop), then calibrates one timed region's cost
  (:func:`profiling.timing.overhead.calibrate`, after the snapshot so it is not counted) and writes
  the totals as JSON to ``$PYFACTORIES_RECORD_OUT``.

With ``$PYFACTORIES_RECORD_PROF`` set (``record --cprofile``), cProfile also profiles the main
thread to that file.
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import threading
import types
from typing import Any, Callable

#: The profiler's timing modules (``profiling/timing``): loaded from there, by path.
_TIMING = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "timing")
_OUT = os.environ.get("PYFACTORIES_RECORD_OUT", "")
_SAMPLE_ROWS = 100
#: CPU per factory of the measurement at exit (it runs after the instrumented totals are taken,
#: but inside the sampled window)
COST_BUDGET_S = 0.01
#: Calls and rounds of the region calibration at exit (about 0.05 s of CPU, also in the sampled window)
CALIBRATION = (500, 5)
#: The profiler's timing folder as a package under a private name: its modules' relative imports
#: (``hooks`` -> ``instrument``) resolve without importing the program's ``profiling``, if any.
_PACKAGE = "_pyfactories_record"


def _load(name: str) -> Any:
    if _PACKAGE not in sys.modules:
        package = types.ModuleType(_PACKAGE)
        package.__path__ = [_TIMING]
        sys.modules[_PACKAGE] = package
    return importlib.import_module(f"{_PACKAGE}.{name}")


instrument = _load("instrument")
factorycost = _load("factorycost")
recorder = instrument.Recorder()
_start = recorder.snapshot()
_best: dict[str, Any] | None = None
_lock = threading.Lock()
_seen: dict[Any, dict[str, Any]] = {}  # row factory -> calls, rows, one result
_driver: dict[str, str] = {}
_requests = {"sent": 0, "with_timeout": 0}
_warnings: list[str] = []


class TimedFactory:
    """A row factory timed as the instrumentation's ``row_factory`` region."""

    __slots__ = ("wrapped", "timed", "seen")

    def __init__(self, fn: Callable[[Any, Any], Any]) -> None:
        self.wrapped = fn
        self.timed = instrument.timed_row_factory(recorder, fn)
        self.seen = _seen.setdefault(fn, {"calls": 0, "rows": 0, "sample": None})

    def __call__(self, colnames: Any, rows: Any) -> Any:
        seen = self.seen
        seen["calls"] += 1
        seen["rows"] += len(rows)
        if seen["sample"] is None and rows:
            seen["sample"] = (list(colnames), [list(r) for r in rows[:_SAMPLE_ROWS]])
        return self.timed(colnames, rows)

    def __eq__(self, other: object) -> bool:
        return other is self or other is self.wrapped or (isinstance(other, TimedFactory)
                                                         and other.wrapped is self.wrapped)

    def __hash__(self) -> int:
        return hash(self.wrapped)


_factories: dict[Any, TimedFactory] = {}
_handlers: dict[type, type] = {}


def _timed_factory(fn: Any) -> Any:
    if fn is None or isinstance(fn, TimedFactory):
        return fn
    try:
        return _factories[fn]
    except KeyError:
        with _lock:
            return _factories.setdefault(fn, TimedFactory(fn))
    except TypeError:  # unhashable callable: left as it is
        return fn


def _timed_handler(handler: type) -> type:
    if handler in _handlers.values():
        return handler
    try:
        return _handlers[handler]
    except KeyError:
        with _lock:
            return _handlers.setdefault(handler, instrument.timed_handler(recorder, handler))


def time_session(session: Any) -> None:
    """The harness's driver hooks on ``session`` (its cluster's connection class, its open
    connections, the reactor's timer heap, its ``execute_async``); never raises into the
    program: a driver they do not fit is left untimed there, and the totals say so."""
    try:
        _load("hooks").install(session, recorder)
    except Exception as exc:
        warning = (f"framing, dispatch, timers and request were not timed on a session ({type(exc).__name__}: "
                   f"{exc}): the driver does not have what the hooks need, so that CPU counts as socket "
                   "(event loop) or other")
        if warning not in _warnings:
            _warnings.append(warning)


def _patch(cluster_module: Any) -> None:
    future_class = cluster_module.ResponseFuture
    send_request = future_class.send_request
    shutdown = cluster_module.Cluster.shutdown
    connect = cluster_module.Cluster.connect

    def timed_send_request(self: Any, *args: Any, **kwargs: Any) -> Any:
        self.row_factory = _timed_factory(self.row_factory)
        self._protocol_handler = _timed_handler(self._protocol_handler)
        _requests["sent"] += 1
        if getattr(self, "timeout", None) is not None:
            _requests["with_timeout"] += 1
        return send_request(self, *args, **kwargs)

    def connect_then_time(self: Any, *args: Any, **kwargs: Any) -> Any:
        session = connect(self, *args, **kwargs)
        time_session(session)
        return session

    def snapshot_then_shutdown(self: Any) -> Any:
        _snapshot()
        reactor = getattr(self.connection_class, "_pf_timed_base", self.connection_class)
        _driver["reactor"] = getattr(reactor, "__name__", "")
        return shutdown(self)

    future_class.send_request = timed_send_request
    cluster_module.Cluster.connect = connect_then_time
    cluster_module.Cluster.shutdown = snapshot_then_shutdown
    import cassandra

    _driver["version"] = cassandra.__version__
    atexit.register(_write)  # after the driver's exit handlers: so it runs before them


def _snapshot() -> None:
    """Keep the latest snapshot taken while an event-loop thread was alive (its CPU is read
    from the live thread)."""
    global _best
    snap = recorder.snapshot()
    if _best is None or snap["loop_threads"] or not _best["loop_threads"]:
        _best = snap


def _factory_costs() -> dict[str, Any] | None:
    """The most used factory against pyfactories' compiled ones, on a result it returned."""
    used = [(s["calls"], fn, s) for fn, s in _seen.items() if s["sample"] is not None]
    if not used:
        return None
    _calls, fn, seen = max(used, key=lambda u: u[0])
    try:
        import pyfactories
    except ImportError:
        return None
    candidates = {name: getattr(pyfactories, name) for name in
                  ("cached_named_tuple_factory", "dict_factory", "ordered_dict_factory")}
    colnames, rows = seen["sample"]
    ns = factorycost.costs({"current": fn, **candidates}, colnames, rows, budget_s=COST_BUDGET_S)
    return {"factory": _name(fn), "rows": len(rows), "columns": len(colnames), "current_ns": ns.pop("current"),
            "replacement_ns": ns}


def _name(fn: Any) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', getattr(fn, '__name__', repr(fn)))}"


def _write() -> None:
    _snapshot()
    if not _OUT or _best is None:
        return
    totals = {
        "instrumented": instrument.delta(_start, _best),
        "factories": {_name(fn): {"calls": s["calls"], "rows": s["rows"]} for fn, s in _seen.items()},
        "driver": _driver,
        "requests": _requests,
        "warnings": _warnings,
    }
    try:
        totals["region_call_ns"] = _load("overhead").calibrate(*CALIBRATION)
    except Exception as exc:  # the profiler calibrates in its own process instead, and says so
        totals["region_call_error"] = f"{type(exc).__name__}: {exc}"
    try:
        totals["factory_costs"] = _factory_costs()
    except Exception as exc:  # the user's factory failed on a copy of its rows: no ratio, say why
        totals["factory_costs"] = None
        totals["factory_costs_error"] = f"{type(exc).__name__}: {exc}"
    with open(_OUT + ".tmp", "w") as f:
        json.dump(totals, f)
    os.replace(_OUT + ".tmp", _OUT)


class _AfterClusterImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``cassandra.cluster`` as usual, and patches it once it has executed."""

    def __init__(self) -> None:
        self.loader: Any = None

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "cassandra.cluster":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        self.loader, spec.loader = spec.loader, self
        sys.meta_path.remove(self)
        return spec

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)
        _patch(module)


def _profile_main_thread(path: str) -> None:
    """cProfile of the main thread from here to exit (Python functions only, the driver's
    compiled code and its event-loop thread unseen), written to ``path``."""
    import cProfile

    profiler = cProfile.Profile()

    def dump() -> None:
        profiler.disable()
        profiler.dump_stats(path)

    atexit.register(dump)  # registered first: runs last
    profiler.enable()


if os.environ.get("PYFACTORIES_RECORD_PROF"):
    _profile_main_thread(os.environ["PYFACTORIES_RECORD_PROF"])
if os.environ.get("PYFACTORIES_RECORD_INSTRUMENT", "1") == "1":
    sys.meta_path.insert(0, _AfterClusterImport())
