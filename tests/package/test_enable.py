"""The one call (``pyfactories.enable``), its status and the deprecated names, without a node: a
``Cluster`` that has not connected, and the decisions of ``pyfactories._support``."""

from __future__ import annotations

import warnings

import pytest
from cassandra.cluster import Cluster
from cassandra.io.libevreactor import LibevConnection

import pyfactories
from pyfactories import _enable, _support, connection


def cluster(**kwargs):
    return Cluster(["127.0.0.1"], **kwargs)


def test_enable_before_connect_sets_our_connection_class_and_says_every_part_is_on():
    c = cluster()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        status = pyfactories.enable(c)
    assert c.connection_class is connection.TimerQueueLibevConnection
    assert list(status) == ["connection", "rows", "binds", "futures"] and status.all_on and status.off() == []
    assert status["rows"].why == "rows built while decoding (named), for every session it connects"
    assert pyfactories.status(c).as_dict() == status.as_dict()
    assert "connection on   TimerQueueLibevConnection" in str(status)


def test_the_asyncio_connection_gets_ours_too():
    from cassandra.io.asyncioreactor import AsyncioConnection

    c = cluster(connection_class=AsyncioConnection)
    assert pyfactories.enable(c)["connection"].on and c.connection_class is connection.TimerQueueAsyncioConnection


def test_switches_turn_parts_off_without_a_warning():
    c = cluster()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        status = pyfactories.enable(c, rows=None, binds=False, futures=False, connection=False)
    assert c.connection_class is LibevConnection
    assert [p.name for p in status.off()] == ["connection", "rows", "binds", "futures"]
    assert status["futures"].why == "turned off (enable(..., futures=False))"


def test_enabling_again_without_the_connection_puts_the_drivers_class_back():
    c = cluster()
    pyfactories.enable(c)
    pyfactories.enable(c, connection=False)
    assert c.connection_class is LibevConnection
    pyfactories.enable(c)
    pyfactories.disable(c)
    assert c.connection_class is LibevConnection and "_new_session" not in c.__dict__
    assert not any(p.on for p in pyfactories.status(c).values())


def test_a_part_that_cannot_run_is_named_with_why_in_one_warning(monkeypatch):
    monkeypatch.setattr(_support, "futures_off", lambda: "its ResponseFuture differs")
    with pytest.warns(RuntimeWarning) as caught:
        status = pyfactories.enable(cluster())
    assert len(caught) == 1
    assert str(caught[0].message) == ("pyfactories: futures is off: its ResponseFuture differs "
                                      "(on: connection, rows, binds)")
    assert [p.name for p in status.off()] == ["futures"]


def test_another_reactor_keeps_its_class_and_says_why():
    class OtherConnection(LibevConnection.__mro__[1]):  # the driver's Connection: not a reactor we know
        pass

    c = cluster(connection_class=OtherConnection)
    with pytest.warns(RuntimeWarning, match="connection is off: .*OtherConnection is not a connection class"):
        status = pyfactories.enable(c)
    assert c.connection_class is OtherConnection and not status["connection"].on


def test_a_column_encryption_policy_keeps_the_session_parts_off():
    from cassandra.policies import ColumnEncryptionPolicy

    c = cluster(column_encryption_policy=ColumnEncryptionPolicy())
    with pytest.warns(RuntimeWarning, match="rows is off: the cluster uses a column encryption policy"):
        status = pyfactories.enable(c)
    assert [p.name for p in status.off()] == ["rows", "binds", "futures"]


def test_wrong_arguments_are_errors():
    with pytest.raises(TypeError, match="takes a cassandra.cluster.Cluster or Session, not str"):
        pyfactories.enable("127.0.0.1")
    with pytest.raises(ValueError, match="rows must be one of"):
        pyfactories.enable(cluster(), rows="tuples")
    with pytest.raises(TypeError):
        pyfactories.status(object())


def test_the_drop_in_cluster_is_the_drivers_with_everything_on():
    c = pyfactories.Cluster(["127.0.0.1"], rows="dict", port=9042)
    assert isinstance(c, Cluster) and c.port == 9042
    assert c.connection_class is connection.TimerQueueLibevConnection
    assert pyfactories.status(c)["rows"].why.startswith("rows built while decoding (dict)")
    assert not pyfactories.Cluster(["127.0.0.1"], connection=False).connection_class is connection.TimerQueueLibevConnection


def test_status_is_data():
    status = pyfactories.enable(cluster())
    part = status["binds"]
    assert isinstance(part, _enable.Part) and (part.name, part.on) == ("binds", True)
    with pytest.raises(AttributeError):
        part.on = False  # frozen
    assert eval(repr(status).replace("Status(", "dict(", 1)[5:-1]) == status.as_dict()  # noqa: S307


@pytest.mark.parametrize("name, new", [
    ("enable", "pyfactories.enable(session)"), ("disable", "pyfactories.disable(session)"),
    ("cluster_options", "pyfactories.enable(cluster) before cluster.connect()"),
    ("bind", "pyfactories.binding.bind(prepared, values)"), ("handler", "pyfactories.decoding.handler")])
def test_the_old_names_work_with_a_deprecation_warning_naming_the_new_call(name, new):
    import re

    from pyfactories import fastpath

    message = re.escape(f"pyfactories.fastpath.{name} is deprecated: use {new}")
    with pytest.warns(DeprecationWarning, match=message) as caught:
        if name == "cluster_options":
            assert fastpath.cluster_options() == {"connection_class": connection.TimerQueueLibevConnection}
        elif name in ("enable", "disable"):  # with a session in the integration suite; here, what it passes on
            with pytest.raises(TypeError, match="takes a cassandra.cluster.Cluster or Session, not object"):
                getattr(fastpath, name)(object())
        else:
            assert getattr(fastpath, name) is getattr(pyfactories.binding if name == "bind" else pyfactories.decoding, name)
    assert len(caught) == 1
    with pytest.raises(AttributeError):
        fastpath.no_such_name


def test_importing_pyfactories_does_not_import_the_drivers_cluster_module():
    import subprocess
    import sys

    code = "import sys, pyfactories; print('cassandra.cluster' in sys.modules, 'pyfactories._enable' in sys.modules)"
    done = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["False", "False"], done.stderr


def test_the_type_stub_says_what_the_module_has():
    """``_enable.pyi`` (what a user's type checker reads) names the same functions, arguments and defaults."""
    import ast
    import inspect
    from pathlib import Path

    stub = ast.parse(Path(_enable.__file__).with_suffix(".pyi").read_text(encoding="utf-8"))

    def arguments(node):
        args = node.args
        return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)], bool(args.vararg), bool(args.kwarg)

    stubbed = {f"{cls}{node.name}": arguments(node) for cls, body in
               [("", stub.body), *[(f"{c.name}.", c.body) for c in stub.body if isinstance(c, ast.ClassDef)]]
               for node in body if isinstance(node, ast.FunctionDef)}
    assert {"enable", "disable", "status", "Cluster.__init__", "Status.off", "Status.as_dict"} <= set(stubbed)
    for name, (args, varargs, varkw) in stubbed.items():
        found = _enable
        for part in name.split("."):
            found = getattr(found, part)
        found = found.fget if isinstance(found, property) else found
        params = inspect.signature(found).parameters.values()
        if name == "status":  # the stub leaves out the keyword enable passes
            params = [p for p in params if p.name != "asked"]
        assert [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)] == args, name
        assert any(p.kind is p.VAR_POSITIONAL for p in params) == varargs, name
        assert any(p.kind is p.VAR_KEYWORD for p in params) == varkw, name
