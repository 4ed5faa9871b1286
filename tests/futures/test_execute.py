"""A session's ``execute_async`` in front of the driver's (``LeanExecute``), compiled (``c``) and pure Python
(``py``), against the driver's own ``Session.execute_async`` on the same scripted session: the same calls on
the session and the future in the same order, with the same arguments (``execute_as`` in the custom payload
included), the same future or error; a method replaced on the class is the one called. The server's side is
in tests/integration/test_futures.py."""

from __future__ import annotations

import importlib

import pytest
from cassandra.cluster import _NOT_SET, EXEC_PROFILE_DEFAULT, Session
from hypothesis import given, settings
from hypothesis import strategies as st

from pyfactories import futures

from .sessions import scripted_session

MODULES = {"c": "pyfactories.futures._futures", "py": "pyfactories.futures._futures_py"}


@pytest.fixture(scope="module", params=sorted(MODULES), ids=sorted(MODULES))
def spec(request):
    return importlib.import_module(MODULES[request.param])


def session(listeners=(), fails=False, creation_fails=False):
    made = scripted_session(fails, "raise" if creation_fails else "future")
    for listener in listeners:
        made.add_request_init_listener(listener)
    return made


calls = st.fixed_dictionaries({}, optional={
    "parameters": st.sampled_from([None, (1,), {"k": 2}]),
    "trace": st.booleans(),
    "custom_payload": st.sampled_from([None, {}, {"a": b"1"}]),
    "timeout": st.sampled_from([_NOT_SET, None, 2.5]),
    "execution_profile": st.sampled_from([EXEC_PROFILE_DEFAULT, "other"]),
    "paging_state": st.sampled_from([None, b"page"]),
    "host": st.sampled_from([None, "a host"]),
    "execute_as": st.sampled_from([None, "", "alice"]),
})


def outcome(execute, made, kwargs):
    try:
        future = execute("SELECT 1", **kwargs)
    except Exception as exc:  # noqa: BLE001 (the driver's error, compared)
        return ("raised", type(exc).__name__, str(exc)), made.log
    return ("future", type(future).__name__), made.log


@settings(max_examples=150, deadline=None)
@given(kwargs=calls, listeners=st.integers(0, 2), fails=st.booleans(), creation_fails=st.booleans())
def test_the_same_steps_as_the_drivers(spec, kwargs, listeners, fails, creation_fails):
    answers = []
    for make in (lambda s: spec.LeanExecute(s), lambda s: lambda *a, **kw: Session.execute_async(s, *a, **kw)):
        seen = []
        made = session([seen.append] * listeners, fails, creation_fails)
        answer, log = outcome(make(made), made, dict(kwargs))
        answers.append((answer, log, [type(f).__name__ for f in seen]))
    assert answers[0] == answers[1]


def test_a_method_replaced_on_the_class_is_called(spec, monkeypatch):
    made = session()
    calls = []

    def instrumented(self, query, *args, **kwargs):
        calls.append((self, query, args))
        return "instrumented"

    def keywords_only(self, query, **kwargs):
        calls.append((self, query, kwargs))
        return "own signature"

    monkeypatch.setattr(Session, "execute_async", instrumented)
    assert spec.LeanExecute(made)("SELECT 1", (1,)) == "instrumented"
    assert calls == [(made, "SELECT 1", ((1,),))]  # the caller's arguments, as given
    monkeypatch.setattr(Session, "execute_async", keywords_only)
    assert spec.LeanExecute(made)("SELECT 2", timeout=3) == "own signature"
    assert calls[1:] == [(made, "SELECT 2", {"timeout": 3})]
    with pytest.raises(TypeError):
        spec.LeanExecute(made)("SELECT 3", (1,))  # as the replacement raises it
    assert made.log == []


def test_install_puts_it_in_front_and_uninstall_takes_it_away():
    if not futures.FUTURES_OURS:
        assert not futures.install(session())
        return
    made = session()
    assert futures.install(made) and type(made.__dict__["execute_async"]) is futures.LeanExecute
    futures.uninstall(made)
    assert "execute_async" not in made.__dict__ and not futures.is_installed(made)
    own = session()
    own.execute_async = profiled = lambda *a, **kw: "profiled"
    assert futures.install(own) and own.execute_async is profiled  # one of its own stays in front
    futures.uninstall(own)
    assert own.execute_async is profiled


def test_only_a_class_that_cannot_change_listens_quietly(spec):
    """A Python class's ``__call__`` can be replaced at any time (to keep the futures it is given): refused."""

    class Listener:
        def __call__(self, future):
            pass

    with pytest.raises(TypeError, match="cannot be replaced"):
        spec.listens_quietly(Listener)
