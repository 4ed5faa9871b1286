"""Field names: the same as the driver's for every column list."""

import logging

import pytest
from cassandra import query, util
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyfactories.rows._rowclass import clean_column_name, sanitize_identifiers

from ..strategies import column_names, column_lists


@pytest.mark.parametrize(
    "name, cleaned",
    [
        ("[applied]", "applied"),
        ("system.count(*)", "system_count"),
        ("_leading", "leading"),
        ("__x__", "x__"),
        ("Weird Name", "Weird_Name"),
        ("", ""),
        ("été", "t"),
        ("1st", "1st"),
    ],
)
def test_clean_column_name_examples(name, cleaned):
    assert clean_column_name(name) == cleaned == query._clean_column_name(name)


@given(column_names)
def test_clean_column_name_matches_driver(name):
    assert clean_column_name(name) == query._clean_column_name(name)


@given(st.lists(column_names, max_size=40))
def test_sanitize_identifiers_matches_driver(names):
    cleaned = [clean_column_name(n) for n in names]
    assert sanitize_identifiers(cleaned) == util._sanitize_identifiers(list(cleaned))


# caplog is cleared by hand around each call, so sharing it across examples is safe.
@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(colnames=column_lists)
def test_row_class_fields_match_driver(impl, colnames, caplog):
    impl.cache_clear()
    values = tuple(range(len(colnames)))
    with caplog.at_level(logging.WARNING):
        driver_row = query.named_tuple_factory(colnames, [values])[0]
        driver_warnings = len(caplog.records)
        caplog.clear()
        ours = impl.cached_named_tuple_factory(colnames, [values])[0]
        ours_first = len(caplog.records)
        caplog.clear()
        impl.cached_named_tuple_factory(list(colnames), [values])
        ours_again = len(caplog.records)
    assert type(ours)._fields == type(driver_row)._fields
    assert type(ours).__name__ == "Row"
    # One warning when the driver warns, none otherwise; a cached class is not re-announced.
    assert (ours_first, ours_again) == (driver_warnings, 0)
