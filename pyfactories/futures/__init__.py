"""Requests that start with fewer Python objects: the driver's ``ResponseFuture``, leaner.

    import pyfactories
    pyfactories.enable(session)     # futures=True: this module's futures, with every other part

What ``install`` changes, on one session object: its ``_create_response_future`` (the step of the
driver's ``Session.execute_async`` that builds the request's message and future) becomes
:class:`LeanCreate`, and its ``execute_async`` :class:`LeanExecute` (the driver's steps; a method
replaced on the class is called instead). Together they give ``execute``, ``execute_async``, ``execute_concurrent`` and their
pages a :class:`LeanResponseFuture`. That is a subclass of the driver's ``ResponseFuture`` with
the same attributes and behaviour (callbacks, errbacks, ``result()``, paging, tracing, retries,
speculative executions, timeouts), and less work per request:

* its completion event makes a lock only when a thread waits on a future that is not done yet
  (the driver's ``threading.Event`` makes a ``Condition`` per request, waited on or not);
* sending it and taking its answer (rows, or none) use no ``functools.partial``, keyword arguments or
  ``Condition.notify`` (when no thread waits for a stream);
* finishing a request calls its callbacks without building a ``functools.partial`` for each;
* with no speculative execution, its timeout timer is armed without asking the plan for one;
* its message is the driver's, built without the class call; its plan's replicas are found in C;
* a task awaiting it is woken by the future itself, without a callback;
* the driver's ``execute_concurrent`` and ``execute_concurrent_with_args`` (and the session's methods
  of those names) keep their books for such a session in C (:func:`execute_concurrent`), when they
  return a list.

Requests the driver builds in a way this module does not (a custom payload, ``execute_as``,
batches, graph statements, continuous paging, the legacy execution parameters) go to the driver's
method, untouched. On scylla-driver the futures follow its own ``ResponseFuture`` where it differs (in
the releases pyfactories is tested on: :data:`FUTURES_OURS`), its ``execute_concurrent`` too (no client
timeout, and the requests started while one is sent queued, not nested). ``uninstall`` puts the session's method back. The specification is
``pyfactories.futures._futures_py``; ``pyfactories.futures._futures`` is its compiled twin.
"""

from __future__ import annotations

from typing import Any

from cassandra import concurrent as _concurrent
from cassandra.cluster import EXEC_PROFILE_DEFAULT, ResponseFuture

from .. import _support
from .. import aio
from ..aio import await_response
from .._impl import COMPILED
from .._sessions import has_own, put_back

if COMPILED:
    from . import _futures as _spec
else:
    from . import _futures_py as _spec

__all__ = ["FUTURES_OURS", "LeanResponseFuture", "LeanCreate", "LeanExecute", "execute_concurrent", "install", "uninstall",
           "is_installed"]

#: whether this driver's ``ResponseFuture`` is one this module follows: cassandra-driver's, or that of a
#: scylla-driver release pyfactories is tested on (another's steps may differ)
FUTURES_OURS = not _support.PROTOCOL_FEATURES or _support.release_off() is None


class LeanResponseFuture(_spec.FutureFields, ResponseFuture):
    """The driver's ``ResponseFuture`` (see the module's docstring); made by :class:`LeanCreate`. The
    attributes its request reads and writes are kept in C by the compiled module (``FutureFields``)."""

    _query = _spec.query
    _set_result = _spec.set_result
    _set_final_result = _spec.set_final_result
    _set_final_exception = _spec.set_final_exception
    add_callback = _spec.add_callback
    add_errback = _spec.add_errback
    add_callbacks = _spec.add_callbacks
    result = _spec.result
    __await__ = await_response  # (pyfactories.aio)


aio._spec.wakes_itself(LeanResponseFuture)

#: a session's ``_create_response_future`` giving :class:`LeanResponseFuture` s for the requests it builds
LeanCreate = _spec.LeanCreate
#: a session's ``execute_async``: the driver's steps, a lean future sent without its Python methods
LeanExecute = _spec.LeanExecute
#: request-init listeners of a class given to this leave a future sent in C (pyfactories' own)
listens_quietly = _spec.listens_quietly


#: whether the driver's ``execute_concurrent`` is one :func:`execute_concurrent` follows: cassandra-driver's,
#: or that of a scylla-driver release pyfactories is tested on (``_futures_py.QUEUED`` says which)
CONCURRENT_OURS = FUTURES_OURS
#: the driver's ``cassandra.concurrent.execute_concurrent``, as imported
DRIVERS_EXECUTE_CONCURRENT = _concurrent.execute_concurrent


def execute_concurrent(session: Any, statements_and_parameters: Any, concurrency: Any = 100,
                       raise_on_first_error: Any = True, results_generator: Any = False,
                       execution_profile: Any = EXEC_PROFILE_DEFAULT) -> Any:
    """What ``install`` puts in ``cassandra.concurrent`` in place of the driver's function (which its
    ``execute_concurrent_with_args`` and the session's methods of both names call): for a session with
    the leaner futures and the results as a list, the same requests, callbacks and results with the
    books kept in C (``pyfactories.futures._futures_py.ListResults``); anything else, the driver's."""
    try:
        ours = (not results_generator and CONCURRENT_OURS and is_installed(session)
                and _drivers_executor_as_imported())
    except Exception:  # noqa: BLE001 (not a session this module knows: the driver's, with its errors)
        ours = False
    if not ours:
        return DRIVERS_EXECUTE_CONCURRENT(session, statements_and_parameters, concurrency, raise_on_first_error,
                                          results_generator, execution_profile)
    if concurrency <= 0:
        raise ValueError("concurrency must be greater than 0")
    if not statements_and_parameters:
        return []
    return _spec.ListResults(session, statements_and_parameters, execution_profile).execute(
        concurrency, raise_on_first_error)


_EXECUTOR = _concurrent.ConcurrentExecutorListResults
_EXECUTOR_STEPS = tuple((name, getattr(_EXECUTOR, name)) for name in (
    "__init__", "execute", "_execute_next", "_execute", "_on_success", "_on_error", "_put_result", "_results"))


def _drivers_executor_as_imported() -> bool:
    """Whether the executor the driver's function would use is its own, as imported (a replaced one, or
    one with a step replaced, is the driver's function's to run)."""
    executor = _concurrent.ConcurrentExecutorListResults
    return executor is _EXECUTOR and all(getattr(executor, name, None) is step for name, step in _EXECUTOR_STEPS)


def _route_concurrent_lists() -> None:
    if CONCURRENT_OURS and _concurrent.execute_concurrent is DRIVERS_EXECUTE_CONCURRENT:
        _concurrent.execute_concurrent = execute_concurrent


def is_installed(session: Any) -> bool:
    return has_own(session, "_create_response_future", LeanCreate)


def install(session: Any) -> bool:
    """Requests of ``session`` get :class:`LeanResponseFuture` s from now on; False (and nothing
    changed) on a driver whose ``ResponseFuture`` this module does not follow."""
    if not FUTURES_OURS:
        return False
    if not is_installed(session):
        session._create_response_future = LeanCreate(session, LeanResponseFuture)
    if "execute_async" not in session.__dict__:  # (one of its own, say a profiler's, stays in front)
        session.execute_async = LeanExecute(session)
    _route_concurrent_lists()
    return True


def uninstall(session: Any) -> None:
    """``session._create_response_future`` and ``execute_async`` are what they were before ``install``."""
    put_back(session, "execute_async", LeanExecute)
    put_back(session, "_create_response_future", LeanCreate)
