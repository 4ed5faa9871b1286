"""The compiled row free list (ext/rows/rows.h): rows recycled safely, whatever is done with their class.

The compiled module replaces the deallocator of the row classes it caches so
freed rows are kept for reuse, as CPython keeps plain tuples. These tests hold
it to the behaviour of an ordinary namedtuple class: types and reference
counts balanced, subclasses, finalizers added later, deep nesting, cycles.
Compiled implementation only: the pure-Python one has no free list.
"""

import gc
import pickle
import subprocess
import sys
import textwrap

import pytest

speedups = pytest.importorskip("pyfactories.rows._rows", reason="the compiled module is not built")
from pyfactories.rows import _rows  # noqa: E402

factory = _rows.cached_named_tuple_factory
LENGTHS = 33  # rows.h: PF_FREE_LIST_LENGTHS
KEPT = 2000  # rows.h: PF_FREE_LIST_MAX


def row_class(names):
    return type(factory(names, [tuple(range(len(names)))])[0])


def test_freed_rows_are_kept_and_reused_with_the_right_class_and_values():
    cols = [f"c{i}" for i in range(7)]
    rows = factory(cols, [tuple(range(i, i + 7)) for i in range(100)])
    del rows
    assert _rows._row_free_list_counts()[7] >= 100
    other = [f"o{i}" for i in range(7)]  # another class of the same length shares the list
    again = factory(other, [tuple(range(i, i + 7)) for i in range(100)])
    assert [tuple(r) for r in again] == [tuple(range(i, i + 7)) for i in range(100)]
    assert {type(r)._fields for r in again} == {tuple(other)}
    assert again[3].o6 == 9 and again[3] == (3, 4, 5, 6, 7, 8, 9)


def test_the_free_list_is_bounded():
    rows = factory(["a", "b", "c"], [(i, i, i) for i in range(3 * KEPT)])
    del rows
    counts = _rows._row_free_list_counts()
    assert len(counts) == LENGTHS and counts[3] == KEPT and max(counts) <= KEPT


def test_class_reference_counts_stay_balanced():
    cols = ["x", "y"]
    cls = row_class(cols)
    before = sys.getrefcount(cls)
    for _ in range(50):
        rows = factory(cols, [(i, str(i)) for i in range(500)])
        assert sys.getrefcount(cls) == before + 500
        del rows
    assert sys.getrefcount(cls) == before


def test_rows_built_by_python_code_are_freed_the_same_way():
    cls = row_class(["p", "q"])
    before = sys.getrefcount(cls)
    made = [cls(i, -i) for i in range(300)] + [cls._make((i, i)) for i in range(300)]
    made += [pickle.loads(pickle.dumps(r)) for r in made[:50]]
    made += [r._replace(p=0) for r in made[:50]]
    assert all(type(r)._fields == cls._fields for r in made)
    del made
    assert sys.getrefcount(cls) == before


def test_a_subclass_of_a_row_class_is_freed_cleanly():
    cls = row_class(["u", "v", "w"])

    class Sub(cls):
        def total(self):
            return sum(self)

    class WithDict(cls):
        pass

    base_refs, sub_refs = sys.getrefcount(cls), sys.getrefcount(Sub)
    subs = [Sub(i, i, i) for i in range(1000)]
    with_dict = [WithDict(i, 0, 0) for i in range(1000)]
    for i, r in enumerate(with_dict):
        r.note = [i]
    assert subs[10].total() == 30 and with_dict[7].note == [7]
    del subs, with_dict
    gc.collect()
    assert (sys.getrefcount(cls), sys.getrefcount(Sub)) == (base_refs, sub_refs)
    rows = factory(["u", "v", "w"], [(1, 2, 3)] * 10)  # the list is still sound
    assert all(type(r) is cls and r == (1, 2, 3) for r in rows)


def test_a_finalizer_added_to_the_class_later_still_runs():
    cls = row_class(["f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9"])
    seen = []
    cls.__del__ = lambda self: seen.append(self.f1)
    try:
        rows = factory(cls._fields, [tuple(range(i, i + 9)) for i in range(20)])
        del rows
        gc.collect()
        assert sorted(seen) == list(range(20))
    finally:
        del cls.__del__


def test_rows_in_reference_cycles_are_collected():
    cls = row_class(["holder"])
    before = sys.getrefcount(cls)
    for _ in range(200):
        box = []
        row = factory(["holder"], [(box,)])[0]
        box.append(row)  # row -> list -> row
        del box, row
    gc.collect()
    assert sys.getrefcount(cls) == before


def test_rows_of_every_length_round_trip_through_the_list():
    for n in (1, 2, 19, 20, 21, 32, 33, 40):
        cols = [f"k{i}" for i in range(n)]
        for _ in range(3):
            rows = factory(cols, [tuple(range(j, j + n)) for j in range(50)])
            assert [tuple(r) for r in rows] == [tuple(range(j, j + n)) for j in range(50)]
            del rows


def test_deeply_nested_rows_are_freed_without_exhausting_the_stack():
    # Run apart: were the deallocator to recurse once per level, this would crash the process.
    code = textwrap.dedent("""
        from pyfactories.rows._rows import cached_named_tuple_factory as f
        row = f(["inner"], [(None,)])[0]
        for _ in range(300_000):
            row = f(["inner"], [(row,)])[0]
        del row
        print("freed")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "freed"


def test_a_row_class_without_the_tuple_layout_is_refused(monkeypatch):
    class NotRows(tuple):  # has a __dict__: more memory per row than a tuple
        pass

    monkeypatch.setattr(_rows, "make_row_class", lambda key: NotRows)
    _rows.cache_clear()
    try:
        with pytest.raises(TypeError, match="not a plain tuple subclass"):
            factory(["never_cached_before"], [(1,)])
    finally:
        _rows.cache_clear()
