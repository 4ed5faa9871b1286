"""``PYFACTORIES_EXAMPLES_SCALE``: the runs that repeat what ``make test`` checks in full (the driver
matrix) give each hypothesis property a fraction of its examples, once per test function."""

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import conftest


def _property(examples):
    @settings(max_examples=examples)
    @given(st.integers())
    def prop(x):
        pass

    return prop


def _examples(test):
    return test._hypothesis_internal_use_settings.max_examples


def test_each_property_runs_its_fraction_of_examples_however_many_parameters_it_has(monkeypatch):
    big, small, plain = _property(200), _property(20), lambda: None
    items = [SimpleNamespace(obj=big), SimpleNamespace(obj=big), SimpleNamespace(obj=small), SimpleNamespace(obj=plain)]
    monkeypatch.setenv(conftest.EXAMPLES_SCALE, "0.25")
    conftest.pytest_collection_modifyitems(None, items)
    assert (_examples(big), _examples(small)) == (50, 10)  # scaled once (two items, one function); at least 10


def test_without_the_variable_every_property_keeps_its_examples(monkeypatch):
    prop = _property(200)
    monkeypatch.delenv(conftest.EXAMPLES_SCALE, raising=False)
    conftest.pytest_collection_modifyitems(None, [SimpleNamespace(obj=prop)])
    assert _examples(prop) == 200


@pytest.mark.parametrize("scale", ["0", "1.5", "-1"])
def test_a_scale_outside_the_fraction_is_refused(monkeypatch, scale):
    monkeypatch.setenv(conftest.EXAMPLES_SCALE, scale)
    with pytest.raises(AssertionError, match="fraction"):
        conftest.pytest_collection_modifyitems(None, [SimpleNamespace(obj=_property(10))])
