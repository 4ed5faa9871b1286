"""class_row/kwargs_row/args_row as a session's row factory, on real results (read-only)."""

import dataclasses

import pytest
from cassandra import query
from cassandra.query import SimpleStatement

from .conftest import profile
from .support import KS

pytestmark = pytest.mark.integration

T = f"{KS}.all_types"
CQL = f'SELECT pk, ck, c_int, c_text, c_list, "Weird Name", "select", count(*) AS "[n]" FROM {T} WHERE pk = 1 GROUP BY ck'


@dataclasses.dataclass(slots=True)
class Row:
    pk: int
    ck: int
    c_int: int | None
    c_text: str | None
    c_list: list | None
    Weird_Name: int | None
    select: int | None
    n: int


@dataclasses.dataclass
class Partial:
    pk: int
    c_text: str | None = None


@pytest.fixture(scope="module")
def driver_rows(clusters):
    session = clusters.cluster(profiles={"named": profile(query.named_tuple_factory)}).connect()
    return list(session.execute(CQL, execution_profile="named"))


@pytest.mark.parametrize("mode", ["profile", "legacy"])
def test_rows_are_the_classes_rows(clusters, impl, driver_rows, mode):
    factory = impl.class_row(Row)
    if mode == "profile":
        session = clusters.cluster(profiles={"typed": profile(factory)}).connect()
        rows = list(session.execute(SimpleStatement(CQL, fetch_size=2), execution_profile="typed"))
    else:
        session = clusters.cluster(legacy=True).connect()
        session.row_factory = factory
        rows = list(session.execute(SimpleStatement(CQL, fetch_size=2)))
    assert len(driver_rows) >= 2
    assert rows == [Row(**r._asdict()) for r in driver_rows]
    assert all(type(r) is Row for r in rows)


def test_extra_ignore_kwargs_and_args_rows(clusters, impl, driver_rows):
    profiles = {"partial": profile(impl.class_row(Partial, extra="ignore")), "kwargs": profile(impl.kwargs_row(dict)),
                "args": profile(impl.args_row(lambda *values: values)),
                "dict": profile(query.dict_factory), "tuple": profile(query.tuple_factory)}
    session = clusters.cluster(profiles=profiles).connect()
    assert list(session.execute(CQL, execution_profile="partial")) == [Partial(r.pk, r.c_text) for r in driver_rows]
    assert list(session.execute(CQL, execution_profile="kwargs")) == list(session.execute(CQL, execution_profile="dict"))
    assert list(session.execute(CQL, execution_profile="args")) == list(session.execute(CQL, execution_profile="tuple"))


def test_a_mismatch_reaches_the_caller(clusters, impl):
    session = clusters.cluster(profiles={"typed": profile(impl.class_row(Partial))}).connect()
    with pytest.raises(impl.ColumnMismatch, match="unexpected column 'ck'"):
        session.execute(f"SELECT pk, ck FROM {T} WHERE pk = 1", execution_profile="typed")
