"""What a user's code looks like; `mypy` must accept it (run by test_typing.py)."""

from dataclasses import dataclass

from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, Session

import pyfactories
from pyfactories import (
    ColumnMismatch,
    RowFactory,
    args_row,
    cached_named_tuple_factory,
    class_row,
    dict_factory,
    kwargs_row,
    was_applied,
)


def configure(session: Session) -> Cluster:
    session.row_factory = cached_named_tuple_factory
    profile = ExecutionProfile(row_factory=dict_factory)
    return Cluster(execution_profiles={EXEC_PROFILE_DEFAULT: profile})


rows: list[tuple] = cached_named_tuple_factory(["a"], [(1,)])
dicts: list[dict[str, object]] = dict_factory(["a"], [(1,)])
size: int = pyfactories.cache_info().currsize
impl: str = pyfactories.__impl__
applied: bool = was_applied(object())


@dataclass(slots=True)
class User:
    id: int
    name: str


def make_user(id: int, name: str) -> User:
    return User(id, name)


def typed_rows(session: Session) -> list[User]:
    session.row_factory = pyfactories.class_row(User, extra="ignore")
    factory: RowFactory[User] = class_row(User)
    by_keyword: list[User] = kwargs_row(make_user)(["id", "name"], [(1, "a")])
    by_position: list[User] = args_row(make_user)(["id", "name"], [(1, "a")])
    try:
        return factory(["id", "name"], [(1, "a")]) + by_keyword + by_position
    except ColumnMismatch as exc:
        raise ValueError(exc.missing, exc.unexpected) from exc


def everything_on(cluster: Cluster) -> bool:
    status: pyfactories.Status = pyfactories.enable(cluster, rows="dict", futures=False)
    part: pyfactories.Part = pyfactories.status(cluster.connect())["rows"]
    pyfactories.disable(cluster)
    drop_in: Cluster = pyfactories.Cluster(["127.0.0.1"], connection=False)
    return status.all_on and part.on and bool(part.why) and drop_in is not None
