"""Fuzz: ``bind`` compiled (``pyfactories.binding._binding``), its pure-Python twin (``pyfactories.binding._binding_py``) and the
driver's ``BoundStatement.bind`` on the same prepared statements and values: real column shapes (the
integration schema's types, routing keys of one or more columns), lying subclasses of the value types,
containers of every kind, and re-entrancy (a column type's ``serialize`` or a value's ``__index__`` that
changes the values list, a statement changed between binds). Each bind gives the driver's statement or the
driver's error."""

from __future__ import annotations

from collections import namedtuple

from cassandra.cqltypes import Int32Type
from cassandra.protocol import ColumnMetadata
from cassandra.query import UNSET_VALUE, BoundStatement
from hypothesis import given
from hypothesis import strategies as st

from pyfactories.binding import _binding
from pyfactories.binding import _binding_py
from tests.bind_values import TYPES, anything, prepared, type_class
from tests.fuzz.conftest import fuzz

CQLS = [cql for cql in TYPES if cql != "counter"]
BINDS = {"driver": lambda s, v: BoundStatement(s).bind(v), "compiled": _binding.bind, "twin": _binding_py.bind}


class Holder:
    """The values list of the bind under way: what the mutating objects below change."""

    values: list = []


def _act(action):
    kind, arg = action
    values = Holder.values
    if type(values) is not list:
        return
    if kind == "pop" and values:
        values.pop()
    elif kind == "clear":
        values.clear()
    elif kind == "append":
        values.append(arg)
    elif kind == "insert":
        values.insert(0, arg)
    elif kind == "truncate":
        del values[arg:]
    elif kind == "replace" and values:
        values[arg % len(values)] = arg


actions = st.tuples(st.sampled_from(["pop", "clear", "append", "insert", "truncate", "replace"]),
                    st.integers(0, 4))


class MutatingIndex:
    """A value whose ``__index__`` (what the driver's integer ``serialize`` calls) changes the values list."""

    def __init__(self, action, result):
        self.action, self.result = action, result

    def __index__(self):
        _act(self.action)
        return self.result

    def __float__(self):
        _act(self.action)
        return float(self.result)

    def encode(self, *args):  # what the driver's text serialize calls
        _act(self.action)
        return str(self.result).encode()

    def __bytes__(self):
        _act(self.action)
        return str(self.result).encode()

    def __repr__(self):
        return f"MutatingIndex({self.action}, {self.result})"


class LyingInt(int):
    def __index__(self):
        return 1 << 70

    def __int__(self):
        return -1

    def __eq__(self, other):
        return True

    def __hash__(self):
        return 0


class LyingFloat(float):
    def __float__(self):
        return 1e300


class LyingStr(str):
    def __len__(self):
        return 10**9

    def encode(self, *args, **kwargs):
        return b"lie"


class LyingBytes(bytes):
    def __len__(self):
        return 0


class LyingBool(int):
    def __bool__(self):
        raise ValueError("no truth")


mutating_index = st.builds(MutatingIndex, actions, st.sampled_from([0, 1, -1, 2**31 - 1, 2**31]))
adversarial = st.one_of(
    st.builds(LyingInt, st.integers(-100, 100)),
    st.builds(LyingFloat, st.floats(allow_nan=False)),
    st.builds(LyingStr, st.text(max_size=5)),
    st.builds(LyingBytes, st.binary(max_size=5)),
    st.builds(LyingBool, st.integers(0, 1)),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), 2**64, -(2**64), 1.0, 2.5, "x" * 70000,
                     b"y" * 70000, "\udc80", 3.4e38, 3.5e38, 2**31, -(2**31) - 1]),
)


class Mutating(Int32Type):
    """A column type (one the driver's ``serialize`` does) that changes the values list as it serializes."""

    action = ("pop", 0)

    @classmethod
    def serialize(cls, value, protocol_version):
        _act(cls.action)
        return Int32Type.serialize(value, protocol_version)


class ListOfItsOwn(list):
    """A list subclass that counts and iterates as a list: bound by position."""


class LyingList(list):
    def __len__(self):
        return 1

    def __iter__(self):
        return iter([2, 3])


Pair = namedtuple("Pair", "a b")


@st.composite
def statements(draw):
    cqls = draw(st.lists(st.sampled_from(CQLS), min_size=1, max_size=6))
    routing = draw(st.lists(st.integers(0, len(cqls) - 1), max_size=3, unique=True))
    mutating = draw(st.one_of(st.none(), st.integers(0, len(cqls) - 1)))
    action = draw(actions)
    return cqls, routing, mutating, action


def _statement(shape):
    cqls, routing, mutating, action = shape
    statement = prepared(cqls, routing=routing)
    if mutating is not None:
        column = statement.column_metadata[mutating]
        statement.column_metadata[mutating] = ColumnMetadata(column.keyspace_name, column.table_name,
                                                             column.name, Mutating)
        Mutating.action = action
    return statement


@st.composite
def values_for(draw, cqls):
    row = []
    for cql in cqls:
        row.append(draw(st.one_of(TYPES[cql][1], mutating_index, adversarial, anything,
                                  st.sampled_from([None, UNSET_VALUE]))))
    if draw(st.booleans()):  # a short row (the rest unset), or one too long
        row = row[:draw(st.integers(0, len(row)))] + draw(st.lists(anything, max_size=1))
    container = draw(st.sampled_from(["list", "list", "list", "tuple", "dict", "own", "lying", "none", "pair"]))
    return container, row


def _container(container, row, cqls):
    if container == "tuple":
        return tuple(row)
    if container == "dict":
        return {f"c{i}": value for i, value in enumerate(row)}
    if container == "own":
        return ListOfItsOwn(row)
    if container == "lying":
        return LyingList(row)
    if container == "none":
        return None
    if container == "pair":
        return Pair(*(row + [None, None])[:2])
    return list(row)


def outcome(bind, statement, values):
    """The statement's state after a bind (its routing key read at once, as a request reads it), or the
    error's type and message."""
    Holder.values = values
    try:
        bound = bind(statement, values)
        key = bound.routing_key
        state = dict(vars(bound))
        state["prepared_statement"] = state.get("prepared_statement") is statement  # each run has its own
        raw = state.pop("raw_values", None)
        return "bound", key, state, None if raw is None else list(raw)
    except Exception as exc:
        return "error", type(exc), str(exc)
    finally:
        Holder.values = []


def all_outcomes(shape, container, row, twice=False):
    found = {}
    for name, bind in BINDS.items():
        statement = _statement(shape)
        if twice:  # a second bind of the statement, its plan made by the first
            outcome(bind, statement, _container(container, row, shape[0]))
        found[name] = outcome(bind, statement, _container(container, row, shape[0]))
    return found


@fuzz
@given(data=st.data())
def test_requests_bind_as_the_driver(data):
    shape = data.draw(statements())
    container, row = data.draw(values_for(shape[0]))
    for twice in (False, True):
        found = all_outcomes(shape, container, row, twice)
        assert found["compiled"] == found["driver"], (shape, container, row)
        assert found["twin"] == found["driver"], (shape, container, row)


@fuzz
@given(before=statements(), after=statements(), data=st.data())
def test_requests_bind_a_statement_changed_in_place(before, after, data):
    """The plan cached by the first bind is never used for the statement's new columns, routing key
    indexes or protocol version, whether the lists were replaced or changed in place."""
    how = data.draw(st.sampled_from(["in place", "replaced", "indexes only", "protocol"]))
    container, row = data.draw(values_for(after[0]))
    first_container, first_row = data.draw(values_for(before[0]))
    found = {}
    for name, bind in BINDS.items():
        statement = _statement(before)
        outcome(bind, statement, _container(first_container, first_row, before[0]))
        other = _statement(after)
        if how == "in place":
            statement.column_metadata[:] = other.column_metadata
            statement.routing_key_indexes[:] = other.routing_key_indexes
        elif how == "replaced":
            statement.column_metadata, statement.routing_key_indexes = (other.column_metadata,
                                                                         other.routing_key_indexes)
        elif how == "indexes only":
            statement.routing_key_indexes[:] = [i for i in other.routing_key_indexes if i < len(before[0])]
        else:
            statement.protocol_version = 3
        found[name] = outcome(bind, statement, _container(container, row, after[0] if how in ("in place",
                                                                                             "replaced") else before[0]))
    assert found["compiled"] == found["driver"], (before, after, how)
    assert found["twin"] == found["driver"], (before, after, how)


weird_indexes = st.lists(st.one_of(st.integers(-3, 8), st.builds(LyingInt, st.integers(0, 3)), st.just(True),
                                   st.just(1.0), st.just("0")), max_size=3)


@fuzz
@given(cqls=st.lists(st.sampled_from(["blob", "int", "text"]), min_size=1, max_size=4), indexes=weird_indexes,
       kind=st.sampled_from(["list", "tuple", "none", "set"]), data=st.data())
def test_requests_bind_with_routing_indexes_of_any_kind(cqls, indexes, kind, data):
    """Routing key indexes that are not ints of the columns (negative, out of range, int subclasses, bools,
    floats, strings, a set) bind and route as the driver's statement does."""
    container, row = data.draw(values_for(cqls))
    found = {}
    for name, bind in BINDS.items():
        statement = prepared(cqls, routing=None)
        statement.routing_key_indexes = {"list": list, "tuple": tuple, "none": lambda i: None,
                                         "set": lambda i: set(map(repr, i))}[kind](indexes)
        found[name] = outcome(bind, statement, _container(container, row, cqls))
    assert found["compiled"] == found["driver"], (indexes, kind)
    assert found["twin"] == found["driver"], (indexes, kind)


class EqualsEveryType(type(Int32Type)):
    """A metaclass whose classes say they equal (and hash as) the driver's Int32Type."""

    def __eq__(cls, other):
        return True

    def __hash__(cls):
        return hash(Int32Type)


def _liar_of(col_type):
    return EqualsEveryType("Liar" + col_type.__name__, (col_type,), {})


class LyingMeta(list):
    """Column metadata that says it has one column."""

    def __len__(self):
        return 1


LIARS = {type_class(cql): _liar_of(type_class(cql)) for cql in ("int", "text", "blob", "bigint", "double")}


@fuzz
@given(cqls=st.lists(st.sampled_from(["int", "text", "blob", "bigint", "double"]), min_size=1, max_size=4),
       meta=st.sampled_from(["lying list", "tuple", "generator-made list", "subclassed column", "none",
                             "types equal to int"]),
       data=st.data())
def test_requests_bind_with_column_metadata_of_any_kind(cqls, meta, data):
    container, row = data.draw(values_for(cqls))
    Column = namedtuple("Column", "keyspace_name table_name name type")  # noqa: N806 (a class)
    found = {}
    for name, bind in BINDS.items():
        statement = prepared(cqls)
        columns = statement.column_metadata
        statement.column_metadata = {
            "lying list": lambda: LyingMeta(columns), "tuple": lambda: tuple(columns),
            "generator-made list": lambda: list(c for c in columns),
            "subclassed column": lambda: [Column(*c) for c in columns], "none": lambda: None,
            "types equal to int": lambda: [c._replace(type=LIARS[c.type]) for c in columns]}[meta]()
        found[name] = outcome(bind, statement, _container(container, row, cqls))
    assert found["compiled"] == found["driver"], meta
    assert found["twin"] == found["driver"], meta


def test_requests_bind_plans_are_made_once():
    statement = prepared(["int", "text"])
    _binding.bind(statement, [1, "a"])
    plan = statement.__dict__[_binding_py.PLAN_ATTRIBUTE + "_compiled"]
    try:
        plan.__init__(prepared(["text"]))
    except TypeError:
        pass
    else:
        raise AssertionError("a plan was made again")
    assert plan.kinds == bytes([_binding_py.INT32, _binding_py.UTF8])
    assert _binding.bind(statement, [1, "a"]).values == [b"\x00\x00\x00\x01", b"a"]


@fuzz
@given(cqls=st.lists(st.sampled_from(["int", "bigint", "text", "blob", "double", "uuid"]), min_size=2, max_size=6),
       data=st.data())
def test_requests_bind_values_resized_while_serializing(cqls, data):
    """A column type's serialize, or a value's ``__index__``/``__float__``/``encode``, that shortens,
    lengthens or rewrites the values list (or its subclass) under the bind: the driver's statement or error."""
    at = data.draw(st.integers(0, len(cqls) - 1))
    action = data.draw(actions)
    through = data.draw(st.sampled_from(["column type", "value"]))
    row = [data.draw(TYPES[cql][1]) for cql in cqls]
    row = row[:data.draw(st.integers(at + 1, len(row)))]
    container = data.draw(st.sampled_from(["list", "own"]))
    routing = data.draw(st.lists(st.integers(0, len(cqls) - 1), max_size=2, unique=True))
    found = {}
    mutating_value = MutatingIndex(action, 7)  # one object: the outcomes' raw values are compared
    for name, bind in BINDS.items():
        statement = prepared(cqls, routing=routing)
        values = list(row)
        if through == "column type":
            column = statement.column_metadata[at]
            statement.column_metadata[at] = ColumnMetadata(column.keyspace_name, column.table_name, column.name,
                                                           Mutating)
            Mutating.action = action
            values[at] = 5
        else:
            values[at] = mutating_value
        found[name] = outcome(bind, statement, ListOfItsOwn(values) if container == "own" else values)
    assert found["compiled"] == found["driver"], (cqls, at, action, through)
    assert found["twin"] == found["driver"], (cqls, at, action, through)
