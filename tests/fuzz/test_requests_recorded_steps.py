"""The record the compiled futures keep of what the driver's classes find (``recorded_steps``), its
version tags reachable from Python: resized, overwritten, exported, while the classes change, every
answer of ``finds_as_recorded`` is the pure-Python twin's, and nothing is read or written past the tags
(the sanitizer build)."""

from hypothesis import given
from hypothesis import strategies as st

from pyfactories.futures import _futures, _futures_py
from tests.fuzz.conftest import fuzz

NAMES = ["a", "b", "c"]

operations = st.lists(st.one_of(
    st.tuples(st.just("check")),
    st.tuples(st.just("set"), st.integers(0, 2), st.sampled_from(NAMES)),
    st.tuples(st.just("delete"), st.integers(0, 2), st.sampled_from(NAMES)),
    st.tuples(st.just("resize"), st.integers(0, 200)),
    st.tuples(st.just("overwrite"), st.binary(max_size=80)),
    st.tuples(st.just("export")),
), max_size=30)


@fuzz
@given(pairs=st.lists(st.tuples(st.integers(0, 2), st.sampled_from(NAMES)), min_size=1, max_size=20),
       ops=operations)
def test_tags_changed_from_python_change_no_answer(pairs, ops):
    top = type("Top", (), {"a": 1})
    middle = type("Middle", (top,), {"b": 2})
    leaf = type("Leaf", (middle,), {})
    classes = [top, middle, leaf]
    names = tuple((classes[i], name) for i, name in pairs)
    ours, theirs = _futures.recorded_steps(names), _futures_py.recorded_steps(names)
    tags = ours[0]
    views = []
    for op in ops:
        if op[0] == "set":
            setattr(classes[op[1]], op[2], object())
        elif op[0] == "delete" and op[2] in vars(classes[op[1]]):
            delattr(classes[op[1]], op[2])
        elif op[0] == "resize" and not views:
            tags[:] = bytes(op[1])
        elif op[0] == "overwrite":
            tags[:len(op[1])] = op[1][:len(tags)] if views else op[1]
        elif op[0] == "export":
            views.append(memoryview(tags))
        assert _futures.finds_as_recorded(ours) is _futures_py.finds_as_recorded(theirs)
    for view in views:
        view.release()
