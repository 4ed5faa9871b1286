"""The fast path's plans for a prepared statement's ``result_metadata``, against the driver.

A plan cached for one ``result_metadata`` must never decode another's rows: the same list changed in
place (an entry replaced, added, removed), a list replaced by a new one, and bodies whose metadata has
no column of its own (NO_METADATA, or a column count of zero or less, where the driver takes
``result_metadata``). Every step is checked against the driver's rows, on one handler whose caches
live across the steps.
"""

import struct

from cassandra import cqltypes
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.conftest import fuzz
from tests.fuzz.decode_support import KINDS, assert_same_outcome
from tests.result_bodies import GLOBAL_TABLES_SPEC, NO_METADATA, ROWS, string

# Each a 4-byte value: every one of these decodes any of them (a different value for each type).
TYPES = [cqltypes.Int32Type, cqltypes.UTF8Type, cqltypes.FloatType, cqltypes.BytesType, cqltypes.AsciiType]
NAMES = ["a", "b", "s", "k"]


def _body(layout, ncols, rows, colcount=None):
    """A body of ``rows`` rows of ``ncols`` 4-byte values, with no columns of its own."""
    if layout == "no_metadata":
        head = struct.pack(">iii", ROWS, NO_METADATA, ncols if colcount is None else colcount)
    else:  # a metadata section of no columns (or a negative count): the driver takes result_metadata
        head = struct.pack(">iii", ROWS, GLOBAL_TABLES_SPEC, colcount or 0) + string("ks") + string("t")
    values = b"".join(struct.pack(">i", 4) + bytes([0x61 + (r + c) % 26]) * 4 for r in range(rows)
                      for c in range(ncols))
    return head + struct.pack(">i", rows) + values


entries = st.tuples(st.just("ks"), st.just("t"), st.sampled_from(NAMES), st.sampled_from(TYPES))

steps = st.one_of(
    st.tuples(st.just("decode"), st.sampled_from(["no_metadata", "zero", "negative"]), st.integers(0, 3)),
    st.tuples(st.just("replace"), st.integers(0, 5), entries),
    st.tuples(st.just("append"), entries),
    st.tuples(st.just("pop")),
    st.tuples(st.just("new_list"), st.lists(entries, min_size=1, max_size=3)),
    st.tuples(st.just("as_tuple")),
)


@fuzz
@given(first=st.lists(entries, min_size=1, max_size=3), script=st.lists(steps, min_size=1, max_size=12),
       kind=st.sampled_from(KINDS), protocol_version=st.sampled_from([4, 5]))
def test_prepared_plans_follow_the_metadata(first, script, kind, protocol_version):
    meta = [tuple(e) for e in first]
    for step in script:
        op = step[0]
        if op == "decode":
            _, layout, rows = step
            colcount = {"no_metadata": None, "zero": 0, "negative": -3}[layout]
            body = _body(layout, len(meta), rows, colcount)
            assert_same_outcome(kind, lambda: (body, meta), protocol_version)
        elif op in ("replace", "append", "pop"):
            # a list changes in place (what a cached plan must notice); a tuple is replaced by another
            target = meta if type(meta) is list else list(meta)
            if op == "replace":
                target[step[1] % len(target)] = tuple(step[2])
            elif op == "append":
                target.append(tuple(step[1]))
            elif len(target) > 1:
                target.pop()
            meta = target if type(meta) is list else tuple(target)
        elif op == "new_list":
            meta = [tuple(e) for e in step[1]]
        elif op == "as_tuple":
            meta = tuple(meta) if type(meta) is list else list(meta)


@fuzz
@given(metas=st.lists(st.lists(entries, min_size=1, max_size=3), min_size=2, max_size=5),
       kind=st.sampled_from(KINDS), layout=st.sampled_from(["no_metadata", "zero", "negative"]))
def test_statements_with_no_columns_in_their_bodies_keep_their_own_types(metas, kind, layout):
    """Two prepared statements whose bodies carry the same (empty) metadata bytes never share a plan."""
    lists = [[tuple(e) for e in m] for m in metas]
    for _ in range(2):
        for meta in lists:
            colcount = {"no_metadata": None, "zero": 0, "negative": -1}[layout]
            body = _body(layout, len(meta), 2, colcount)
            assert_same_outcome(kind, lambda: (body, meta), 5, times=1)
