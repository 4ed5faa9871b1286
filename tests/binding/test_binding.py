"""``bind`` (``pyfactories.binding._binding`` and its specification ``pyfactories.binding._binding_py``) against the driver's
``BoundStatement.bind``: the same statement state, values, routing key and errors for every CQL type."""

from __future__ import annotations

import datetime
import gc
import importlib
import sys
import tracemalloc
from collections import namedtuple

import pytest
from cassandra import ConsistencyLevel
from cassandra.policies import FallthroughRetryPolicy
from cassandra.query import UNSET_VALUE, BatchStatement, BoundStatement, PreparedStatement
from hypothesis import given, settings
from hypothesis import strategies as st

from pyfactories import binding
from pyfactories.binding import _binding_py
from pyfactories import decoding
from pyfactories.binding._binding_py import PLAN_ATTRIBUTE as PLAN

from ..bind_values import TYPES, anything, prepared

IMPLEMENTATIONS = {"c": "pyfactories.binding._binding", "py": "pyfactories.binding._binding_py"}
ALL = list(TYPES)
ROW = st.tuples(*[TYPES[cql][1] for cql in ALL])


@pytest.fixture(scope="module", params=sorted(IMPLEMENTATIONS), ids=sorted(IMPLEMENTATIONS))
def bind(request):
    """The ``bind`` under test, compiled (``c``) or the specification (``py``)."""
    return importlib.import_module(IMPLEMENTATIONS[request.param]).bind


def outcome(call):
    """What a bind leaves: the statement's whole state (its routing key read first, as the driver reads it
    when it routes), or the error's type and message."""
    try:
        bound = call()
        key = bound.routing_key
    except Exception as exc:  # compared: the same kind of error, the same message
        return ("error", type(exc), str(exc))
    return ("bound", type(bound), key, vars(bound))


def assert_binds_as_the_driver(bind, statement, values):
    theirs = outcome(lambda: BoundStatement(statement).bind(values))
    ours = outcome(lambda: bind(statement, values))
    assert ours == theirs
    return ours


@settings(max_examples=150)
@given(row=ROW, holes=st.lists(st.sampled_from([None, UNSET_VALUE]), max_size=3), where=st.lists(st.integers(0, 28)))
def test_rows_of_every_type_bind_as_the_driver(bind, row, holes, where):
    values = list(row)
    for hole, index in zip(holes, where):
        values[index % len(values)] = hole
    statement = prepared(ALL, routing=(0, 8, 12))
    found = assert_binds_as_the_driver(bind, statement, values)
    assert_binds_as_the_driver(bind, statement, tuple(values))
    assert found[0] == "bound" or any(values[i] in (None, UNSET_VALUE) for i in (0, 8, 12)), found


@pytest.mark.parametrize("cql", ALL)
@settings(max_examples=60)
@given(data=st.data())
def test_any_value_in_a_column_binds_or_fails_as_the_driver(bind, cql, data):
    value = data.draw(st.one_of(TYPES[cql][1], anything))
    for routing in [(0,), (0, 1), ()]:
        statement = prepared([cql, "text"], routing=routing)
        assert_binds_as_the_driver(bind, statement, [value, "key"])
        assert_binds_as_the_driver(bind, statement, ["key" if cql == "text" else None, value][::-1])


@pytest.mark.parametrize("value, message", [
    ("1", "required argument is not an integer"), (2**31, "format requires"), (1.0, "not an integer"),
])  # fmt: skip
def test_refused_values_have_the_drivers_error(bind, value, message):
    found = assert_binds_as_the_driver(bind, prepared(["int"]), [value])
    assert found[:2] == ("error", TypeError)
    assert found[2].startswith('Received an argument of invalid type for column "c0". Expected: ') and message in found[2]


@pytest.mark.parametrize("values", [
    [1, "a", 2.0, 4], [1, "a"], [1], [], (), None, [1, UNSET_VALUE, 2.0], [UNSET_VALUE, "a", 1.0],
    {"c0": 1, "c1": "a", "c2": 2.0}, {"c0": 1}, {"c1": "a"}, {"c0": 1, "c1": "a", "c2": 2.0, "other": 5}, {},
    (x for x in [1, "a", 2.0]), "abc", b"\x01", 5, [None, None, None],
])  # fmt: skip
@pytest.mark.parametrize("protocol", [3, 4, 5])
@pytest.mark.parametrize("routing", [(0,), (0, 1), (), None])
def test_counts_names_unset_and_protocols_as_the_driver(bind, values, protocol, routing):
    statement = prepared(["int", "text", "double"], routing=routing, protocol=protocol)
    if hasattr(values, "__next__"):  # a generator: one for each side
        values, again = list(values), list(values)
        theirs = outcome(lambda: BoundStatement(statement).bind(iter(values)))
        assert outcome(lambda: bind(statement, iter(again))) == theirs
    else:
        assert_binds_as_the_driver(bind, statement, values)


def test_the_errors_say_what_the_driver_says(bind):
    statement = prepared(["int", "text"], routing=(0,))
    assert assert_binds_as_the_driver(bind, statement, [1, "a", 3])[1:] == (
        ValueError, "Too many arguments provided to bind() (got 3, expected 2)")
    assert assert_binds_as_the_driver(bind, statement, {"c1": "a"})[1:] == (
        ValueError, "Cannot bind UNSET_VALUE as a part of the routing key 'c0'")
    assert assert_binds_as_the_driver(bind, statement, [])[0] == "error"


@pytest.mark.parametrize("attributes", [
    {}, {"consistency_level": ConsistencyLevel.QUORUM, "serial_consistency_level": ConsistencyLevel.LOCAL_SERIAL},
    {"fetch_size": 7, "custom_payload": {"k": b"v"}, "retry_policy": FallthroughRetryPolicy(), "is_idempotent": True},
    {"_serial_consistency_level": ConsistencyLevel.ONE},  # refused by the driver's BoundStatement
])  # fmt: skip
def test_the_statements_options_are_the_drivers(bind, attributes):
    assert_binds_as_the_driver(bind, prepared(["int", "text"], **attributes), [1, "a"])


def test_a_statement_without_markers(bind):
    statement = PreparedStatement([], b"id", None, "SELECT ...", "ks", 5, None, None)
    for values in [None, (), [], {}, [1]]:
        assert_binds_as_the_driver(bind, statement, values)


class Row(tuple):
    """A tuple whose iteration is not the tuple's: bound by the driver's own ``bind``."""

    def __iter__(self):
        return iter(reversed(tuple(self)))


@pytest.mark.parametrize("values", [
    namedtuple("Values", "a b c")(1, "x", 2.5), namedtuple("Two", "a b")(1, "x"), Row((1, "x", 2.5)),
    type("Values", (list,), {})([1, "x", 2.5]), (v for v in [1]), range(3), "ab",
])  # fmt: skip
def test_other_sequences_bind_as_the_driver(bind, values):
    assert_binds_as_the_driver(bind, prepared(["int", "text", "double"], routing=(0, 1)), values)


def test_a_statement_without_column_metadata(bind):
    statement = PreparedStatement(None, b"id", None, "SELECT ...", "ks", 5, None, None)
    for values in [None, (), [1]]:
        assert_binds_as_the_driver(bind, statement, values)


@pytest.mark.parametrize("extra, named", [("table", True), ("something_else", False)])
def test_a_driver_whose_statements_start_with_more_attributes(bind, monkeypatch, extra, named):
    """scylla-driver's ``BoundStatement`` also names the table; any other attribute: the driver's ``bind``."""
    init = BoundStatement.__init__

    def more(self, prepared_statement, *args, **kwargs):
        init(self, prepared_statement, *args, **kwargs)
        if prepared_statement.column_metadata:
            setattr(self, extra, prepared_statement.column_metadata[0].table_name)

    monkeypatch.setattr(BoundStatement, "__init__", more)
    statement = prepared(["int", "text"])
    assert assert_binds_as_the_driver(bind, statement, [1, "a"])[3][extra] == "t"
    assert assert_binds_as_the_driver(bind, statement, {"c0": 2})[0] == "bound"
    assert getattr(statement, f"{PLAN}_compiled", getattr(statement, PLAN, None)).covered is named


def test_a_column_encryption_policy_is_the_drivers_work(bind):
    class NoColumnEncrypted:
        def contains_column(self, col_desc):
            return False

    statement = prepared(["int", "text"], column_encryption_policy=NoColumnEncrypted())
    assert assert_binds_as_the_driver(bind, statement, [1, "a"])[0] == "bound"


def test_a_changed_statement_gets_a_new_plan(bind):
    statement = prepared(["int", "text"], routing=(0,))
    assert_binds_as_the_driver(bind, statement, [1, "a"])
    other = prepared(["text", "int"], routing=(1,))
    statement.column_metadata, statement.routing_key_indexes = other.column_metadata, other.routing_key_indexes
    assert assert_binds_as_the_driver(bind, statement, ["a", 1])[2] == b"\x00\x00\x00\x01"
    statement.protocol_version = 3
    assert_binds_as_the_driver(bind, statement, {"c0": "a"})


@pytest.mark.parametrize("parts", [[b"a", b"bc"], [b"", b"x" * 70000], [None, b"x"]])
def test_composite_routing_keys_are_the_drivers(bind, parts):
    statement = prepared(["blob", "blob"], routing=(1, 0))
    assert_binds_as_the_driver(bind, statement, parts)


def test_many_binds_keep_no_references_or_memory(bind):
    statement = prepared(ALL[:13] + ["list<int>"], routing=(0, 8))
    values = [2**31 - 5, 2**60, 2**62, 30000, 100, True, 1.25, 2.5, "text ✓", "varchar", "ascii", b"blob",
              datetime.datetime(2024, 1, 2, 3, 4, 5, 6), [1, 2]]

    def work():
        for _ in range(300):
            bind(statement, values)
            bind(statement, {"c0": 1, "c8": "k"})
            with pytest.raises(TypeError):
                bind(statement, [object()] * 14)
            with pytest.raises(ValueError):
                bind(statement, values + [1])

    work()  # plans made, interpreter state warm
    gc.collect()
    refs = [sys.getrefcount(v) for v in values] + [sys.getrefcount(statement), sys.getrefcount(values)]
    kept = memory_kept_by(work)
    assert [sys.getrefcount(v) for v in values] + [sys.getrefcount(statement), sys.getrefcount(values)] == refs
    assert kept < 16 * 1024  # 2,400 binds more: allocator noise only


def memory_kept_by(work) -> int:
    """Bytes still allocated after ``work`` ran twice more than after it ran once."""
    tracemalloc.start()
    try:
        work()
        gc.collect()
        once = tracemalloc.get_traced_memory()[0]
        for _ in range(2):
            work()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - once
    finally:
        tracemalloc.stop()


@given(value=st.datetimes())
def test_timestamps_round_as_each_driver_does(value):
    """cassandra-driver rounds through a double, scylla-driver in integers: each installed driver's own way
    is found (the differential tests check it against that driver)."""
    exact = (value - datetime.datetime(1970, 1, 1)) // datetime.timedelta(milliseconds=1)
    assert _binding_py.timestamp_millis(value, "integer") == exact
    seconds = (value.replace(microsecond=0) - datetime.datetime(1970, 1, 1)) // datetime.timedelta(seconds=1)
    assert _binding_py.timestamp_millis(value, "double") == int(seconds * 1e3 + value.microsecond / 1e3)
    assert _binding_py.TIMESTAMP_ROUNDING in ("double", "integer")


def test_the_default_bind_is_the_compiled_one():
    assert binding.bind is importlib.import_module(IMPLEMENTATIONS["c"]).bind


class Session:
    """A session's ``prepare`` as the driver's ``Session`` has it (a method of its class)."""

    def prepare(self, query, custom_payload=None, keyspace=None):
        return prepared(["int", "text"])


def test_install_adopts_what_the_sessions_prepare_returns():
    session, other = Session(), Session()
    binding.install(session)
    adopted = session.prepare("INSERT ...")
    assert type(adopted) is binding.FastBindPreparedStatement and isinstance(adopted, PreparedStatement)
    assert type(other.prepare("INSERT ...")) is PreparedStatement
    assert outcome(lambda: adopted.bind([1, "a"])) == outcome(lambda: BoundStatement(adopted).bind([1, "a"]))
    batch = BatchStatement()
    batch.add(adopted, [2, "b"])
    assert batch._statements_and_parameters[0][2] == [b"\x00\x00\x00\x02", b"b"]
    binding.install(session)  # twice is once
    binding.uninstall(session)
    assert not binding.is_installed(session) and type(session.prepare("q")) is PreparedStatement
    binding.uninstall(session)


def test_install_keeps_an_applications_own_prepare():
    session, calls = Session(), []

    def logged(query, **kwargs):
        calls.append(query)
        return Session.prepare(session, query, **kwargs)

    session.prepare = logged
    binding.install(session)
    assert type(session.prepare("q1")) is binding.FastBindPreparedStatement and calls == ["q1"]
    binding.uninstall(session)
    assert session.prepare is logged


def test_adopt_leaves_other_classes_alone():
    class Mine(PreparedStatement):
        pass

    statement = prepared(["int"])
    statement.__class__ = Mine
    assert type(binding.adopt(statement)) is Mine
