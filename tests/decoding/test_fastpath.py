"""The fast path's decoder, without a server: differential against the driver's handler, and fuzzed.

Bodies are built by ``result_bodies`` from the driver's own type classes; the
integration suite repeats the comparison through a real Cassandra.
"""

import os
import struct
import subprocess
import sys

import cassandra
import pytest
from cassandra import DriverException, cqltypes
from cassandra.protocol import ProtocolHandler
from cassandra.query import dict_factory, named_tuple_factory, tuple_factory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyfactories import _driver
from pyfactories import decoding

from ..result_bodies import EMPTY_VALUE, SAMPLES, UDT, result_metadata, rows_body, string

FACTORY = {"named": named_tuple_factory, "dict": dict_factory, "tuple": tuple_factory}
RESULT = 0x08


@pytest.fixture(params=["named", "dict", "tuple"])
def rows_kind(request):
    return request.param


def decode(handler, body, protocol_version=5, result_meta=None, user_types=None, flags=0):
    return _driver.decode_message(handler, protocol_version, user_types or {}, 1, flags, RESULT, body, None,
                                  result_meta)


def driver_rows(body, rows_kind, **kwargs):
    msg = decode(ProtocolHandler, body, **kwargs)
    return msg, FACTORY[rows_kind](msg.column_names, msg.parsed_rows)


def assert_same(ours, theirs):
    assert ours == theirs
    for mine, driver in zip(ours, theirs):
        assert type(mine).__name__ == type(driver).__name__
        if isinstance(driver, dict):
            assert list(mine) == list(driver)
        elif type(driver) is tuple:
            assert type(mine) is tuple
        else:
            assert type(mine)._fields == type(driver)._fields


@st.composite
def result_sets(draw):
    picked = draw(st.lists(st.sampled_from(range(len(SAMPLES))), min_size=1, max_size=8))
    columns = [(draw(st.sampled_from(["k", "v", "Weird Name", "[applied]", "if", "1st", "_x", "v"])) + str(i), SAMPLES[j][0])
               for i, j in enumerate(picked)]
    value = {j: st.sampled_from(SAMPLES[j][1] + [None, EMPTY_VALUE]) for j in picked}
    rows = draw(st.lists(st.tuples(*[value[j] for j in picked]), max_size=6))
    return columns, rows


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(result=result_sets(), protocol_version=st.sampled_from([4, 5]), prepared=st.booleans(),
       paging_state=st.sampled_from([None, b"", b"\x01page"]))
def test_rows_equal_driver_rows(rows_kind, result, protocol_version, prepared, paging_state):
    columns, rows = result
    body = rows_body(columns, rows, protocol_version, paging_state=paging_state, metadata=not prepared)
    meta = result_metadata(columns) if prepared else None
    handler = decoding.handler(rows_kind)
    expected_msg, expected = driver_rows(body, rows_kind, protocol_version=protocol_version, result_meta=meta)
    for _ in range(2):  # the second decode runs on a cached plan
        msg = decode(handler, body, protocol_version, meta)
        assert_same(msg.parsed_rows, expected)
        for attr in ("kind", "column_names", "paging_state", "stream_id", "trace_id"):
            assert getattr(msg, attr) == getattr(expected_msg, attr), attr
        # Parameterized type classes are made anew by every parse: compare them by CQL name.
        assert _type_names(msg.column_types) == _type_names(expected_msg.column_types)
        assert _metadata(msg.column_metadata) == _metadata(expected_msg.column_metadata)


def _type_names(types):
    return [t.cql_parameterized_type() for t in types]


def _metadata(column_metadata):
    return None if column_metadata is None else [(*md[:3], md[3].cql_parameterized_type()) for md in column_metadata]


def test_plans_are_cached_and_keyed_by_metadata(rows_kind):
    handler = decoding.handler(rows_kind)
    decoder = handler.message_types_by_opcode[RESULT].decoder
    decoder.clear()
    ints = [("a", cqltypes.Int32Type)]
    texts = [("a", cqltypes.UTF8Type)]
    for _ in range(3):
        assert decode(handler, rows_body(ints, [[1]])).parsed_rows[0][_key(rows_kind)] == 1
        assert decode(handler, rows_body(texts, [["x"]])).parsed_rows[0][_key(rows_kind)] == "x"
    assert (decoder.hits, decoder.misses) == (4, 2)


def _key(rows_kind):
    return "a" if rows_kind == "dict" else 0


def test_registered_user_type_class_reaches_cached_plans(rows_kind):
    class Address:
        def __init__(self, street, zip):
            self.street, self.zip = street, zip

    handler = decoding.handler(rows_kind)
    body = rows_body([("addr", UDT)], [[UDT.tuple_type("main", 1)]])
    user_types = {}
    first = decode(handler, body, user_types=user_types).parsed_rows[0]
    user_types["ks"] = {"address": Address}
    second = decode(handler, body, user_types=user_types).parsed_rows[0]
    value = lambda row: row["addr"] if rows_kind == "dict" else row[0]  # noqa: E731
    assert not isinstance(value(first), Address)
    assert isinstance(value(second), Address) and value(second).zip == 1


def test_decode_error_names_the_column_like_the_driver(rows_kind):
    good = rows_body([("k", cqltypes.Int32Type), ("price", cqltypes.DecimalType)], [[1, None]])
    bad = good[:-4] + struct.pack(">i", 2) + b"\x00\x01"  # a 2-byte decimal cannot hold its scale
    with pytest.raises(DriverException) as theirs:
        decode(ProtocolHandler, bad)
    with pytest.raises(DriverException) as ours:
        decode(decoding.handler(rows_kind), bad)
    assert str(ours.value) == str(theirs.value)
    assert 'Failed decoding result column "price" of type decimal' in str(ours.value)


def test_frames_with_flags_take_the_driver_route_and_still_build_rows(rows_kind):
    columns = [("k", cqltypes.Int32Type)]
    body = rows_body(columns, [[7]])
    warned = struct.pack(">H", 1) + string("a server warning") + body
    _, expected = driver_rows(warned, rows_kind, flags=0x08)
    msg = decode(decoding.handler(rows_kind), warned, flags=0x08)
    assert msg.warnings == ["a server warning"]
    assert_same(msg.parsed_rows, expected)


def _mutations():
    body = rows_body([(f"c{i}", t) for i, (t, _) in enumerate(SAMPLES[:12])],
                     [[vals[0] for _, vals in SAMPLES[:12]], [None] * 12])
    nested = rows_body([("m", SAMPLES[22][0]), ("u", UDT), ("t", SAMPLES[23][0])],
                       [[SAMPLES[22][1][0], UDT.tuple_type("s", 1), (1, "a")]])
    return st.sampled_from([body, nested]).flatmap(lambda b: st.tuples(
        st.just(b),
        st.lists(st.tuples(st.integers(0, len(b) - 1), st.integers(0, 255)), max_size=4),
        st.integers(0, len(b)),
    ))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_mutations())
def test_corrupted_bodies_raise_driver_errors_never_crash(rows_kind, case):
    body, flips, cut = case
    data = bytearray(body)
    for pos, byte in flips:
        data[pos] = byte
    data = bytes(data[:cut])
    try:
        expected = _outcome(decode(ProtocolHandler, data), FACTORY[rows_kind])
    except Exception:
        expected = None
    try:
        got = _outcome(decode(decoding.handler(rows_kind), data), lambda names, rows: rows)
    except DriverException:
        assert expected is None, "the fast path refused a body the driver decodes"
        return
    assert expected is not None, "the fast path decoded a body the driver refuses"
    assert got == expected


def _outcome(msg, factory):
    """What a decoded message says: its rows for ROWS results, else its kind."""
    return factory(msg.column_names, msg.parsed_rows) if msg.kind == 2 else ("kind", msg.kind)


def _fastpath_in_a_subprocess(setup):
    code = (
        "import warnings, cassandra\n" + setup +
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    from pyfactories import decoding\n"
        "print(decoding.AVAILABLE)\n"
        "print(repr(decoding.UNAVAILABLE_REASON) if not caught else [str(w.message) for w in caught])\n"
        "try:\n"
        "    decoding.handler('named')\n"
        "except RuntimeError as exc:\n"
        "    print('handler:', exc)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYFACTORIES_NO_EXTENSIONS"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "False"
    assert lines[2].startswith("handler: pyfactories.decoding is off")
    return lines[1]


def test_refuses_a_driver_release_it_is_not_tested_on():
    warned = _fastpath_in_a_subprocess("cassandra.__version__ = '3.99.0'\n")
    assert ("3.99.0 is not a driver release it is tested on (cassandra-driver 3.30.0, 3.30.1; "
            "scylla-driver 3.29.11, 3.29.12)") in warned


def test_refuses_a_driver_whose_compiled_declarations_differ():
    warned = _fastpath_in_a_subprocess("import pyfactories._driver as d\nd.pxd_digest = lambda package=None: '0' * 16\n")
    installed = f"{_driver.distribution()} {cassandra.__version__}"
    from pyfactories.rows import _rows

    assert (f"the compiled declarations of {installed} differ from those of the driver it was built against "
            f"({_rows.BUILT_AGAINST_DRIVER})") in warned


def test_the_declarations_digest_reads_declarations_only(tmp_path):
    from pyfactories import _driver

    for name in _driver.FASTPATH_PXD:
        (tmp_path / name).write_text(f"# licence of {name}\n\ncdef class X:\n    cdef int n\n")
    base = _driver.pxd_digest(tmp_path)
    (tmp_path / "buffer.pxd").write_text("# another licence\ncdef class X:\n\n    cdef int n\n")
    assert _driver.pxd_digest(tmp_path) == base
    (tmp_path / "buffer.pxd").write_text("cdef class X:\n    cdef long n\n")
    assert _driver.pxd_digest(tmp_path) != base
    (tmp_path / "deserializers.pxd").unlink()
    assert _driver.pxd_digest(tmp_path) is None


def test_rows_argument_is_checked():
    with pytest.raises(ValueError, match="rows must be one of"):
        decoding.handler("tuples")


def test_uuid_values_are_the_objects_the_driver_builds(rows_kind):
    """16-byte uuid/timeuuid values are built without UUID.__init__: they must be indistinguishable."""
    import pickle
    import uuid

    values = [uuid.uuid4(), uuid.uuid1(), uuid.UUID(int=0), uuid.UUID(int=2**128 - 1)]
    body = rows_body([("a", cqltypes.UUIDType), ("b", cqltypes.TimeUUIDType)], [[v, v] for v in values])
    _, expected = driver_rows(body, rows_kind)
    got = decode(decoding.handler(rows_kind), body).parsed_rows
    pairs = [(a, b) for x, y in zip(got, expected) for a, b in zip(_values(x), _values(y))]
    assert len(pairs) == 8
    for ours, theirs in pairs:
        assert type(ours) is type(theirs) is uuid.UUID
        assert (ours.int, ours.is_safe, repr(ours), str(ours), hash(ours)) == (
            theirs.int, theirs.is_safe, repr(theirs), str(theirs), hash(theirs))
        assert pickle.dumps(ours) == pickle.dumps(theirs)


def test_uuid_of_the_wrong_length_fails_like_the_driver(rows_kind):
    good = rows_body([("id", cqltypes.UUIDType)], [[None]])
    bad = good[:-4] + struct.pack(">i", 15) + b"\x01" * 15
    with pytest.raises(DriverException) as theirs:
        decode(ProtocolHandler, bad)
    with pytest.raises(DriverException) as ours:
        decode(decoding.handler(rows_kind), bad)
    assert str(ours.value) == str(theirs.value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.lists(st.binary(max_size=12) | st.text(max_size=6).map(str.encode), min_size=3, max_size=3))
def test_text_values_and_their_errors_are_the_drivers(rows_kind, raw):
    """text, varchar and ascii are decoded in place: any bytes give the driver's value or its error."""
    good = rows_body([("t", cqltypes.UTF8Type), ("v", cqltypes.VarcharType), ("a", cqltypes.AsciiType)],
                     [[None, None, None]])
    body = good[:-12] + b"".join(struct.pack(">i", len(b)) + b for b in raw)
    rows = rows_or_same_error(body, rows_kind)
    if rows:
        got, expected = rows
        assert got == expected
        assert [type(v) for v in _values(got[0])] == [str, str, str]


TIMESTAMP_EDGES = [0, -1, 1, 999, -999, 1000, -1000, 86_399_999, -86_400_001, -62_135_596_800_000,
                   -62_135_596_800_001, -62_135_510_400_001, -62_135_510_400_000, 253_402_300_799_999,
                   253_402_300_800_000, 253_402_214_399_999, 253_402_214_400_000, 2**63 - 1, -(2**63),
                   1_700_000_000_123, -1_700_000_000_123, 951_782_400_000]  # ... and 2000-02-29


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ms=st.sampled_from(TIMESTAMP_EDGES) | st.integers(-(2**63), 2**63 - 1)
       | st.integers(-62_135_596_800_000 - 10**9, 253_402_300_799_999 + 10**9)
       | st.integers(-(10**13), 10**13))
def test_timestamps_and_their_errors_are_the_drivers(rows_kind, ms):
    """timestamp values are built from the driver's own arithmetic: the same datetime, or the same error."""
    good = rows_body([("ts", cqltypes.DateType)], [[None]])
    body = good[:-4] + struct.pack(">iq", 8, ms)
    rows = rows_or_same_error(body, rows_kind)
    if rows:
        (ours,), (theirs,) = _values(rows[0][0]), _values(rows[1][0])
        assert type(ours) is type(theirs)
        assert (ours, ours.tzinfo, ours.fold) == (theirs, theirs.tzinfo, theirs.fold)


def rows_or_same_error(body, rows_kind):
    """(our rows, the driver's) for ``body``; None when both raised, with the same message."""
    try:
        _, expected = driver_rows(body, rows_kind)
    except DriverException as theirs:
        with pytest.raises(DriverException) as ours:
            decode(decoding.handler(rows_kind), body)
        assert str(ours.value) == str(theirs)
        return None
    return decode(decoding.handler(rows_kind), body).parsed_rows, expected


def _values(row):
    return list(row.values()) if isinstance(row, dict) else list(row)


def test_timestamps_are_built_in_place_only_where_the_driver_computes_the_same():
    """cassandra-driver rounds timestamps through a double, scylla-driver exactly: the in-place
    arithmetic is cassandra-driver's, so scylla-driver's timestamps come from its deserializer."""
    from pyfactories.decoding import _fastpath

    assert _fastpath._TIMESTAMPS_IN_PLACE is (_driver.distribution() == "cassandra-driver")
