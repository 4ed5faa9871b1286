"""The fast ``decode_message`` against the driver's, on real ROWS bodies and their mutations.

Bodies hold every CQL type of ``tests/result_bodies.SAMPLES``, in each metadata layout (one table spec
for all columns, one per column, none with the prepared statement's ``result_metadata``), with and
without a paging state and a result metadata id, for protocol v3, v4 and v5; then they are mutated:
bytes flipped, the body cut, an [int] field (flags, column count, paging state length, row count, a
value's length) set to a lie (negative, -1, zero, huge, off by a few). Every kind of rows (tuple,
named, dict) must be the driver's rows with the driver's row factory, or an error where the driver
has one (a DriverException: ``MalformedResult`` where the driver crashes or reads garbage).
"""

import struct

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.conftest import fuzz
from tests.fuzz.decode_support import KINDS, LAYOUTS, assert_same_outcome, build
from tests.result_bodies import EMPTY_VALUE, SAMPLES, result_metadata

NAMES = ["k", "v", "Weird Name", "[applied]", "if", "1st", "_x", "é"]
LIES = [-1, -2, -(2**31), 0, 1, 2, 3, 4, 7, 16, 2**31 - 1, 2**16, 0x7FFF0000]


@st.composite
def bodies(draw):
    picked = draw(st.lists(st.sampled_from(range(len(SAMPLES))), min_size=1, max_size=6))
    columns = [(draw(st.sampled_from(NAMES)) + str(i), SAMPLES[j][0]) for i, j in enumerate(picked)]
    value = {j: st.sampled_from(SAMPLES[j][1] + [None, EMPTY_VALUE]) for j in picked}
    rows = draw(st.lists(st.tuples(*[value[j] for j in picked]), max_size=4))
    protocol_version = draw(st.sampled_from([3, 4, 5]))
    layout = draw(st.sampled_from(LAYOUTS))
    paging_state = draw(st.sampled_from([None, b"", b"\x01page"]))
    metadata_id = draw(st.sampled_from([None, b"", b"\xaa\xbb"])) if protocol_version >= 5 else None
    body, fields = build(columns, rows, protocol_version, layout, paging_state=paging_state,
                         metadata_id=metadata_id)
    meta = result_metadata(columns) if layout == "no_metadata" or draw(st.booleans()) else None
    return body, fields, meta, protocol_version


@st.composite
def mutated(draw):
    body, fields, meta, protocol_version = draw(bodies())
    data = bytearray(body)
    for _ in range(draw(st.integers(0, 2))):  # an [int] field lies
        at = draw(st.sampled_from(fields))
        lie = draw(st.sampled_from(LIES + [len(body) - at, len(body) - at - 3, len(body)]))
        data[at:at + 4] = struct.pack(">i", lie)
    for _ in range(draw(st.integers(0, 2))):  # bytes flipped
        at = draw(st.integers(4, len(data) - 1))
        data[at] = draw(st.integers(0, 255))
    if draw(st.booleans()):  # cut short
        data = data[:draw(st.integers(4, len(data)))]
    return bytes(data), meta, protocol_version


@fuzz
@given(case=bodies(), kind=st.sampled_from(KINDS))
def test_decode_real_bodies_as_the_driver(case, kind):
    body, _, meta, protocol_version = case
    outcome = assert_same_outcome(kind, lambda: (body, meta), protocol_version)
    assert outcome[0] == "rows", outcome  # a real body decodes


@fuzz
@given(case=mutated(), kind=st.sampled_from(KINDS))
def test_decode_mutated_bodies_as_the_driver(case, kind):
    body, meta, protocol_version = case
    assert_same_outcome(kind, lambda: (body, meta), protocol_version)
