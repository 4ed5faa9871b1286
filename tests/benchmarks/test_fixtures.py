"""The captured RESULT bodies decode with the driver's handler into the expected rows."""

import warnings

import pytest
from cassandra.protocol import ProtocolHandler
from cassandra.query import dict_factory, named_tuple_factory

from benchmarks import bench_decode
from benchmarks.data import capture, fixtures
from profiling import typed
from profiling.factories import BY_NAME, offline

NAMES = fixtures.names()
#: What each fast-path kind of rows must equal: the driver's factory on the driver's decoded rows.
EXPECTED = {"named": named_tuple_factory, "dict": dict_factory, "class": typed.handwritten_dataclass_rows}


def test_every_capture_has_its_fixture():
    assert [c.name for c in fixtures.CAPTURES] == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_fixture_decodes_into_the_expected_rows(name):
    fx = fixtures.load(name)
    assert fx.opcode == capture.RESULT_OPCODE and fx.protocol_version >= 4
    assert fx.info["metadata_in_body"] is False  # prepared statements: the driver supplies the metadata
    msg = fx.decode()
    assert len(msg.parsed_rows) == fx.rows
    assert all(len(r) == fx.cols for r in msg.parsed_rows)
    assert msg.column_names == [c[2] for c in fx.columns]
    for factory in offline().values():
        assert len(factory(msg.column_names, msg.parsed_rows)) == fx.rows


def test_fixture_shapes():
    shapes = {n: (fixtures.load(n).rows, fixtures.load(n).cols) for n in NAMES}
    assert shapes == {"row1_10col": (1, 10), "page200_10col": (200, 10), "row1_50col": (1, 50),
                      "page200_50col": (200, 50), "page200_coll": (200, 10)}
    coll = fixtures.load("page200_coll").decode().parsed_rows[0]
    assert {type(v).__name__ for v in coll} >= {"SortedSet", "list", "OrderedMapSerializedKey", "tuple"}


def test_ours_equal_the_drivers_on_real_rows():
    for name in NAMES:
        msg = fixtures.load(name).decode()
        ours = offline()
        assert ours["cached_named_tuple"](msg.column_names, msg.parsed_rows) == \
            named_tuple_factory(msg.column_names, msg.parsed_rows)
        assert ours["pf_dict"](msg.column_names, msg.parsed_rows) == dict_factory(msg.column_names, msg.parsed_rows)


def test_fastpath_decodes_to_the_drivers_rows():
    decoders, why_not = bench_decode.fastpath_decoders()
    if not decoders:
        pytest.skip(f"fast path not measured: {why_not}")
    for name in NAMES:
        fx = fixtures.load(name)
        drv = fx.decode()
        for choice, (decode, factory) in decoders.items():
            step = bench_decode.make_step(decode, fx)
            rows = step(factory, fx.body)
            expected = EXPECTED[BY_NAME[choice].rows](drv.column_names, drv.parsed_rows)
            assert rows == expected, (name, choice)


def test_a_damaged_fixture_is_refused(tmp_path):
    fx = fixtures.load("row1_10col")
    fx.name = "damaged"
    p = fixtures.save(fx, tmp_path)
    text = p.read_text().replace(fx.to_json()["body_sha256"], "0" * 64)
    p.write_text(text)
    with pytest.raises(ValueError, match="SHA-256"):
        fixtures.load("damaged", tmp_path)


def test_decode_worker_at_a_tiny_size():
    spec = bench_decode.default_spec("tiny", ["row1_10col", "page200_coll"])
    out = bench_decode._work(spec)
    for name in ("row1_10col", "page200_coll"):
        samples = out["samples"][name]
        assert {"tuple", "named_tuple", "cached_named_tuple", "pf_dict", "py_dict"} <= set(samples)
        assert all(len(v) == spec["rounds"] and min(v) > 0 for v in samples.values())


def test_the_decode_step_is_the_drivers_handler():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        decoders, _ = bench_decode.decoders()
    assert decoders["tuple"][0] == ProtocolHandler.decode_message
    assert decoders["named_tuple"][1] is named_tuple_factory
