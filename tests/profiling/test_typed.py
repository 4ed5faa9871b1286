"""Dataclass rows for any column list (``profiling.typed``): the three ways build equal rows."""

import dataclasses

import pytest
from cassandra.query import named_tuple_factory

from benchmarks.data import shapes
from profiling import typed


@pytest.mark.parametrize("rows, cols, kind", [(0, 3, "mixed"), (1, 10, "mixed"), (200, 10, "mixed"),
                                              (20, 50, "text"), (5, 3, "ints")])
def test_the_three_ways_build_equal_rows(rows, cols, kind):
    colnames, data = shapes.make_rows(rows, cols, kind)
    cls = typed.dataclass_for(colnames)
    expected = [cls(*r) for r in data]
    assert typed.handwritten_dataclass_rows(colnames, data) == expected
    assert typed.dataclass_rows(colnames, data) == expected
    assert typed.py_dataclass_rows(colnames, data) == expected
    for row in typed.dataclass_rows(colnames, data):
        assert type(row) is cls and not hasattr(row, "__dict__")


def test_one_plain_slotted_dataclass_per_column_list_named_as_the_driver_names_fields():
    colnames = ["k", "[applied]", "system.count(*)"]
    cls = typed.dataclass_for(colnames)
    assert typed.dataclass_for(list(colnames)) is cls
    assert dataclasses.is_dataclass(cls) and "__slots__" in cls.__dict__
    fields = tuple(f.name for f in dataclasses.fields(cls))
    assert fields == named_tuple_factory(colnames, [(1, True, 2)])[0]._fields
    assert typed.dataclass_rows(colnames, [(1, True, 2)]) == [cls(1, True, 2)]


@pytest.mark.parametrize("colnames", [["a", "a"], ["1st"], ["class"], ["a b", "a_b"]])
def test_columns_that_cannot_be_fields_get_a_clear_error(colnames):
    with pytest.raises(ValueError, match="do not name a dataclass's fields"):
        typed.dataclass_for(colnames)


def test_the_class_cache_is_bounded():
    for i in range(typed._MAX_CLASSES + 10):
        typed.dataclass_for([f"c{i}"])
    assert len(typed._ENTRIES) == typed._MAX_CLASSES


def test_the_fast_path_hands_dataclass_rows_decoded_tuples():
    assert typed.dataclass_rows.__pyfactories_factory__ is True
    assert not hasattr(typed.handwritten_dataclass_rows, "__pyfactories_factory__")
