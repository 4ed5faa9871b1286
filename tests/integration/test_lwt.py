"""Lightweight transactions: ``pyfactories.was_applied`` says what the server says, with every factory
(ours, the driver's, the fast path); and what the driver's own ``ResultSet.was_applied`` does with each."""

import dataclasses

import pytest
from cassandra.cluster import EXEC_PROFILE_DEFAULT
from cassandra.query import BatchStatement, SimpleStatement

import pyfactories
from pyfactories.rows import _rows_py
from pyfactories.rows import _rows

from .support import DRIVER, KS, Target, assert_same_rows, values_of

pytestmark = pytest.mark.integration

CONFIGS = (
    [f"driver.{kind}" for kind in DRIVER]
    + [f"{impl}.{kind}" for impl in ("c", "py") for kind in ("named", "dict", "ordered")]
    + ["fast.named", "fast.dict"]
)
# The driver's ResultSet.was_applied accepts only its own named_tuple_factory, dict_factory and
# tuple_factory (by identity). The fast path hands the rows it built over with tuple_factory, so it works there.
DRIVER_WAS_APPLIED_WORKS = {"driver.tuple", "driver.named", "driver.dict", "fast.named", "fast.dict"}

# (statement, parameters, applied, what the not-applied row shows)
STEPS = [
    ("INSERT INTO {t} (k, v) VALUES (%s, %s) IF NOT EXISTS", ("K", 1), True, None),
    ("INSERT INTO {t} (k, v) VALUES (%s, %s) IF NOT EXISTS", ("K", 2), False, {"v": 1, "note": None}),
    ("UPDATE {t} SET v = %s WHERE k = %s IF v = %s", (3, "K", 1), True, None),
    ("UPDATE {t} SET v = %s WHERE k = %s IF v = %s", (4, "K", 1), False, {"v": 3}),
    ("UPDATE {t} SET note = %s WHERE k = %s IF EXISTS", ("n", "K"), True, None),
    ("DELETE FROM {t} WHERE k = %s IF v = %s AND note = %s", ("K", 99, "n"), False, {"v": 3, "note": "n"}),
    ("DELETE FROM {t} WHERE k = %s IF EXISTS", ("K",), True, None),
    ("UPDATE {t} SET v = %s WHERE k = %s IF EXISTS", (5, "K"), False, {}),
]


def target_for(clusters, config, protocol_version=5):
    kind, _, rows = config.partition(".")
    if kind == "fast":
        # the session's own profile names our factory of those rows: built while decoding
        return clusters.fast_target(protocol_version, "profile", rows)
    return clusters.target(protocol_version, "profile", config)


def reference(config):
    """The driver's factory whose rows ``config`` must reproduce."""
    return DRIVER[config.split(".")[1]]


def check(config, rs, applied, shows):
    assert rs.column_names[0] == "[applied]"
    rows = rs.current_rows
    assert len(rows) == 1
    assert pyfactories.was_applied(rs) is applied
    if config in DRIVER_WAS_APPLIED_WORKS:
        assert rs.was_applied == applied
    else:
        with pytest.raises(RuntimeError, match="Cannot determine LWT result with row factory"):
            rs.was_applied  # noqa: B018
    # the row is what the driver's factory makes of the same values
    assert_same_rows(rows, reference(config)(rs.column_names, [values_of(rows[0])]))
    values = dict(zip(rs.column_names, values_of(rows[0])))
    assert values["[applied]"] is applied
    if shows is not None:
        assert {name: values[name] for name in shows} == shows
    if config.endswith(".named"):
        assert rows[0].applied is applied  # the driver's cleaned name for [applied]


@pytest.mark.parametrize("protocol_version", [5, 4], ids=lambda p: f"v{p}")
@pytest.mark.parametrize("prepared", [False, True], ids=["simple", "prepared"])
@pytest.mark.parametrize("config", CONFIGS)
def test_was_applied(clusters, schema, config, prepared, protocol_version):
    target = target_for(clusters, config, protocol_version)
    key = schema.key("lwt")
    for text, params, applied, shows in STEPS:
        cql = text.format(t=f"{KS}.lwt")
        params = tuple(key if p == "K" else p for p in params)
        statement = target.prepare(cql.replace("%s", "?")) if prepared else SimpleStatement(cql)
        check(config, target.execute(statement, params), applied, shows)


@pytest.mark.parametrize("config", CONFIGS)
def test_was_applied_for_batches(clusters, schema, config):
    target = target_for(clusters, config)
    key = schema.key("lwtb")

    def batch():
        b = BatchStatement()
        b.add(SimpleStatement(f"INSERT INTO {KS}.lwt (k, v) VALUES (%s, 1) IF NOT EXISTS"), (key,))
        b.add(SimpleStatement(f"UPDATE {KS}.lwt SET note = 'batched' WHERE k = %s"), (key,))
        return target.execute(b)

    first = batch()
    assert pyfactories.was_applied(first) is True
    second = batch()
    assert pyfactories.was_applied(second) is False
    if config in DRIVER_WAS_APPLIED_WORKS:
        assert (first.was_applied, second.was_applied) == (True, False)

    plain = BatchStatement()
    plain.add(SimpleStatement(f"INSERT INTO {KS}.lwt (k, v) VALUES (%s, 2)"), (key + "p",))
    rs = target.execute(plain)
    with pytest.raises(RuntimeError, match="No LWT were present in the BatchStatement"):
        pyfactories.was_applied(rs)
    if config in DRIVER_WAS_APPLIED_WORKS:
        with pytest.raises(RuntimeError, match="No LWT were present in the BatchStatement"):
            rs.was_applied  # noqa: B018


@dataclasses.dataclass(slots=True)
class Outcome:
    """A typed row of the conditional statements above: ``[applied]`` cleans to ``applied``."""

    applied: bool
    k: str | None = None
    v: int | None = None
    note: str | None = None


@dataclasses.dataclass
class NoApplied:
    v: int | None = None


@pytest.mark.parametrize("fast", [False, True], ids=["driver_path", "fastpath"])
@pytest.mark.parametrize("impl", ["c", "py"])
def test_was_applied_with_typed_rows(clusters, schema, impl, fast):
    module = _rows if impl == "c" else _rows_py
    base = clusters.fast_target(5, "default", "named") if fast else clusters.target(5, "profile", "driver.named")
    typed = Target(base.session, {"execution_profile": base.session.execution_profile_clone_update(
        EXEC_PROFILE_DEFAULT, row_factory=module.class_row(Outcome))})
    key = schema.key(f"lwtt{impl}{int(fast)}")
    for text, params, applied, shows in STEPS:
        cql = text.format(t=f"{KS}.lwt")
        rs = typed.execute(SimpleStatement(cql), tuple(key if p == "K" else p for p in params))
        [row] = rs.current_rows
        assert type(row) is Outcome and row.applied is applied
        assert pyfactories.was_applied(rs) is applied
        for name, value in (shows or {}).items():
            assert getattr(row, name) == value
    bare = Target(base.session, {"execution_profile": base.session.execution_profile_clone_update(
        EXEC_PROFILE_DEFAULT, row_factory=module.class_row(NoApplied, extra="ignore"))})
    rs = bare.execute(SimpleStatement(f"UPDATE {KS}.lwt SET v = 1 WHERE k = %s IF EXISTS"), (key,))
    with pytest.raises(TypeError, match="a typed row needs a field named applied"):
        pyfactories.was_applied(rs)
