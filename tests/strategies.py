"""Hypothesis strategies for column lists and rows, shared by the differential tests."""

import keyword

from hypothesis import strategies as st

_awkward = st.sampled_from(
    ["", "[applied]", "system.count(*)", "_", "_x", "1a", "a b", "Row", "_fields", "field_0_", "k", "K", "é"]
    + keyword.kwlist
)
column_names = st.one_of(
    _awkward,
    st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True),
    st.text(max_size=12),
)

# 1 to 300 columns; duplicates arise naturally from the small alphabet of awkward names.
column_lists = st.one_of(
    st.lists(column_names, min_size=1, max_size=20),
    st.lists(st.from_regex(r"c[0-9]{1,3}", fullmatch=True), min_size=100, max_size=300, unique=True),
)

values = st.one_of(
    st.none(),
    st.integers(),
    st.text(max_size=8),
    st.binary(max_size=8),
    st.booleans(),
    st.floats(allow_nan=False),
    st.lists(st.integers(), max_size=3),
)


@st.composite
def result_sets(draw, max_rows=20):
    """``(colnames, rows)`` as the driver hands them to a row factory: a list of value tuples."""
    colnames = draw(column_lists)
    row = st.tuples(*[values] * len(colnames)) if len(colnames) <= 20 else st.just(tuple(range(len(colnames))))
    rows = draw(st.lists(row, max_size=max_rows))
    return colnames, rows
