"""The records the compiled futures keep of what the driver's classes find (``recorded_steps``): while the
classes change and records are put together from one record's tags and another's steps (classes, stand-ins
in their place), every answer of ``finds_as_recorded`` is the pure-Python twin's for those steps, and
nothing is read past an object (the sanitizer build)."""

from hypothesis import given
from hypothesis import strategies as st

from pyfactories.futures import _futures, _futures_py
from tests.fuzz.conftest import fuzz

NAMES = ["a", "b", "c"]


class StandIn:
    """Not a class, in a class's place (as a mock would be)."""

    a = 1


pairs = st.lists(st.tuples(st.integers(0, 3), st.sampled_from(NAMES)), min_size=1, max_size=20)
operations = st.lists(st.one_of(
    st.tuples(st.just("check"), st.integers(0, 3)),
    st.tuples(st.just("set"), st.integers(0, 2), st.sampled_from(NAMES)),
    st.tuples(st.just("delete"), st.integers(0, 2), st.sampled_from(NAMES)),
    st.tuples(st.just("record"), pairs),
    st.tuples(st.just("mix"), st.integers(0, 3), st.integers(0, 3)),
), max_size=30)


@fuzz
@given(first=pairs, ops=operations)
def test_records_answer_as_the_twin_whatever_their_tags(first, ops):
    top = type("Top", (), {"a": 1})
    middle = type("Middle", (top,), {"b": 2})
    leaf = type("Leaf", (middle,), {})
    classes = [top, middle, leaf, StandIn()]

    def record(chosen):
        names = tuple((classes[i], name) for i, name in chosen)
        return _futures.recorded_steps(names), _futures_py.recorded_steps(names)

    records = [record(first)]
    for op in ops:
        if op[0] == "set":
            setattr(classes[op[1]], op[2], object())
        elif op[0] == "delete" and op[2] in vars(classes[op[1]]):
            delattr(classes[op[1]], op[2])
        elif op[0] == "record":
            records.append(record(op[1]))
        elif op[0] == "mix":  # one record's tags, another's steps: the twin's answer for those steps
            tags_of, steps_of = records[op[1] % len(records)], records[op[2] % len(records)]
            records.append(((tags_of[0][0],) + steps_of[0][1:], steps_of[1]))
        ours, theirs = records[op[1] % len(records)] if op[0] == "check" else records[-1]
        for _ in range(2):
            assert _futures.finds_as_recorded(ours) is _futures_py.finds_as_recorded(theirs)
