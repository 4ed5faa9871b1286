"""A row class given a __del__ that moves the dying row to another row class (__class__ assignment).

The row free list's dealloc released the class it had read before the finalizer ran: the old class
lost a reference it did not owe (freed while the cache still used it: a crash) and the new class kept
one forever. The class is read again after the finalizer, as CPython's own dealloc does.
"""
import gc
import sys

from pyfactories.rows import _rows

rows = _rows.cached_named_tuple_factory(["a", "b"], [(1, 2)])
Row = type(rows[0])
Other = type(_rows.cached_named_tuple_factory(["x", "y"], [(1, 2)])[0])
moved = []


def __del__(self):
    moved.append(1)
    self.__class__ = Other


Row.__del__ = __del__
before_row, before_other = sys.getrefcount(Row), sys.getrefcount(Other)
for _ in range(50):
    built = _rows.cached_named_tuple_factory(["a", "b"], [(1, 2), (3, 4)])
    assert [tuple(r) for r in built] == [(1, 2), (3, 4)]
    del built
assert len(moved) == 100
assert sys.getrefcount(Row) == before_row, (sys.getrefcount(Row), before_row)
assert sys.getrefcount(Other) == before_other, (sys.getrefcount(Other), before_other)
del Row.__del__
assert _rows.cached_named_tuple_factory(["a", "b"], [(5, 6)]) == [(5, 6)]
_rows.cache_clear()
del rows
gc.collect()
print("ok")
