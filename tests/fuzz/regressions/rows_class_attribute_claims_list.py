"""Objects whose __class__ attribute claims list/tuple/str without being one.

The twin asked isinstance(), which believes __class__, and read them; the compiled module checks the
real type and refused them: one answered, the other raised. Both now check the real type.
"""
from pyfactories.rows import _typed_py
from pyfactories.rows import _rows_py
from pyfactories.rows import _rows


class Pretend:
    def __init__(self, claim, items):
        self._claim, self._items = claim, items

    @property
    def __class__(self):
        return self._claim

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def __getitem__(self, i):
        return self._items[i]


cases = [
    (["a"], Pretend(list, [(1,)])),
    (["a"], [Pretend(tuple, [1])]),
    (Pretend(list, ["a"]), [(1,)]),
    ([Pretend(str, "a")], [(1,)]),
]
for colnames, rows in cases:
    for a, b in ((_rows.cached_named_tuple_factory, _rows_py.cached_named_tuple_factory),
                 (_rows.dict_factory, _rows_py.dict_factory),
                 (_rows.kwargs_row(dict), _typed_py.kwargs_row(dict))):
        outcome = []
        for f in (a, b):
            try:
                outcome.append(f(colnames, rows))
            except TypeError:
                outcome.append(TypeError)
        assert outcome == [TypeError, TypeError], outcome
print("ok")
