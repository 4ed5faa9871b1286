"""A list subclass row whose __iter__ yields fewer values than the list stores (and than there are columns).

The typed rows copied such a row with tuple(row) after checking the list's own size, then read the
copy at every column position: past the end of a shorter tuple (a segfault). Now the row's values are
what its iteration yields, checked against the column count: the twin's ValueError.
"""
import dataclasses

from pyfactories.rows import _typed_py
from pyfactories.rows import _rows


class Short(list):
    def __iter__(self):
        return iter(())


@dataclasses.dataclass(slots=True)
class Point:
    a: int
    b: int
    c: int


def same(make_compiled, make_twin, colnames, rows):
    got = want = None
    try:
        got = make_compiled(colnames, rows)
    except Exception as exc:  # noqa: BLE001 - compared below
        got = type(exc)
    try:
        want = make_twin(colnames, rows)
    except Exception as exc:  # noqa: BLE001
        want = type(exc)
    assert got == want, (got, want)
    return got


cols = ["a", "b", "c"]
for name, args in (("args_row", (lambda *v: v,)), ("kwargs_row", (dict,)), ("class_row", (Point,))):
    compiled, twin = getattr(_rows, name)(*args), getattr(_typed_py, name)(*args)
    assert same(compiled, twin, cols, [Short([1, 2, 3])]) is ValueError
    assert same(compiled, twin, cols, [(1, 2, 3), Short([1, 2, 3])]) is ValueError
    many = [f"c{i}" for i in range(30)]
    if name != "class_row":
        assert same(compiled, twin, many, [Short(range(30))]) is ValueError
print("ok")
