"""Typed rows on the driver's path and through the fast path: a request whose profile names
``class_row`` gets rows of its class, equal field by field (values of the same types) to the
hand-written conversion of the driver's rows, for every CQL type of the table, through simple and
prepared statements, paging, execute_async and execute_concurrent, on protocols v4 and v5; the other
requests of the session keep their rows.
"""

import dataclasses
import keyword

import attrs
import msgspec
import pytest
from cassandra.cluster import EXEC_PROFILE_DEFAULT
from cassandra.protocol import ProtocolHandler
from cassandra.query import SimpleStatement

from pyfactories.rows import _rows_py
from pyfactories.rows import _rows
from pyfactories import decoding
from pyfactories.rows._rowclass import clean_column_name

from .support import ALL_TYPES, METHODS, Target, assert_same_fetch, assert_same_value, fetch

pytestmark = pytest.mark.integration

PROTOCOLS = [5, 4]
IMPLS = {"c": _rows, "py": _rows_py}


def _classes(fields):
    """One class of each way ``class_row`` builds rows: direct fill, init call, constructor."""

    def post_init(self):
        self.seen = True

    plain = dataclasses.make_dataclass("AllTypes", fields, slots=True)
    hooked = dataclasses.make_dataclass("AllTypes", [*fields, ("seen", bool, dataclasses.field(default=False))],
                                        namespace={"__post_init__": post_init})
    return {
        "slotted": plain,
        "post_init": hooked,
        "attrs": attrs.make_class("AllTypes", fields),
        "msgspec": msgspec.defstruct("AllTypes", fields),
    }


@pytest.fixture(scope="module")
def reference(clusters, schema):
    """Per protocol: the driver's rows of every method, the columns that can name a field (by index; the
    table also has a column "1st", which no class can declare), and classes of those fields."""
    out = {}
    for protocol_version in PROTOCOLS:
        driver = clusters.driver(protocol_version, "tuple")
        fetched = {method: fetch(driver, method) for method in METHODS}
        cleaned = [clean_column_name(n) for n in fetched["simple"].column_names]
        keep = [(i, f) for i, f in enumerate(cleaned) if f.isidentifier() and not keyword.iskeyword(f)]
        assert len(keep) == len(cleaned) - 1  # all but "1st"
        out[protocol_version] = fetched, keep, _classes([f for _, f in keep])
    return out


def with_profile(fast, factory):
    profile = fast.session.execution_profile_clone_update(EXEC_PROFILE_DEFAULT, row_factory=factory)
    return Target(fast.session, {"execution_profile": profile})


@pytest.mark.parametrize("protocol_version", PROTOCOLS, ids=lambda p: f"v{p}")
@pytest.mark.parametrize("kind", ["slotted", "post_init", "attrs", "msgspec"])
@pytest.mark.parametrize("impl", sorted(IMPLS))
@pytest.mark.parametrize("path", ["fastpath", "driver_path"])
def test_class_rows_equal_the_hand_written_conversion(clusters, reference, path, impl, kind, protocol_version):
    fetched, keep, classes = reference[protocol_version]
    cls = classes[kind]
    factory = IMPLS[impl].class_row(cls, extra="ignore")
    if path == "fastpath":
        session = clusters.fast_target(protocol_version, "default", "named")
    else:
        session = clusters.driver(protocol_version, "named")
    target = with_profile(session, factory)
    for method in METHODS:
        theirs = fetched[method]
        ours = fetch(target, method)
        assert (ours.column_names, ours.pages) == (theirs.column_names, theirs.pages), method
        assert len(ours.rows) == len(theirs.rows) > 0
        for i, (mine, values) in enumerate(zip(ours.rows, theirs.rows)):
            assert type(mine) is cls
            assert mine == cls(**{f: values[j] for j, f in keep}), (method, i)
            for j, f in keep:
                assert_same_value(getattr(mine, f), values[j], f"{method} row {i} field {f}")
            if kind == "post_init":
                assert mine.seen is True
    # on the fast path, the request took its plain-tuple route and kept its own factory
    rs = target.execute(SimpleStatement(ALL_TYPES.simple()))
    handler = decoding.handler("tuple") if path == "fastpath" else ProtocolHandler
    assert rs.response_future._protocol_handler is handler
    assert rs.response_future.row_factory is factory


@pytest.mark.parametrize("protocol_version", PROTOCOLS, ids=lambda p: f"v{p}")
def test_the_sessions_other_requests_keep_their_rows(clusters, reference, protocol_version):
    fetched, keep, classes = reference[protocol_version]
    fast = clusters.fast_target(protocol_version, "default", "dict")
    typed = with_profile(fast, _rows.class_row(classes["slotted"], extra="ignore"))
    driver = clusters.driver(protocol_version, "dict")
    for method in ("simple_paged", "concurrent"):
        assert all(type(r) is classes["slotted"] for r in fetch(typed, method).rows)
        assert_same_fetch(fetch(fast, method), fetch(driver, method))  # the session's default: dict rows
