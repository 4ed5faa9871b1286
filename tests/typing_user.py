"""What a user's code looks like; `mypy` must accept it (run by test_typing.py)."""

from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, Session

import pyfactories
from pyfactories import cached_named_tuple_factory, dict_factory, was_applied


def configure(session: Session) -> Cluster:
    session.row_factory = cached_named_tuple_factory
    profile = ExecutionProfile(row_factory=dict_factory)
    return Cluster(execution_profiles={EXEC_PROFILE_DEFAULT: profile})


rows: list[tuple] = cached_named_tuple_factory(["a"], [(1,)])
dicts: list[dict[str, object]] = dict_factory(["a"], [(1,)])
size: int = pyfactories.cache_info().currsize
impl: str = pyfactories.__impl__
applied: bool = was_applied(object())
