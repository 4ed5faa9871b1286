"""Rows that are list/tuple subclasses whose __iter__, __getitem__ or __len__ disagree with their storage.

The compiled factories copied such a row's storage (and sized it by its storage), where the driver's
factories (Row(*row), zip(colnames, row)) and the pure-Python twin read what its iteration yields: a
different row. Now every factory reads a subclass row through its iteration, like the driver.
"""
from cassandra import query

from pyfactories.rows import _typed_py
from pyfactories.rows import _rows_py
from pyfactories.rows import _rows


class IterLies(list):
    def __iter__(self):
        return iter([7, 8])


class TupleLies(tuple):
    def __iter__(self):
        return iter(["x", "y"])

    def __getitem__(self, i):
        return "wrong"

    def __len__(self):
        return 5


cols = ["a", "b"]
for rows in ([IterLies([1, 2])], [TupleLies((1, 2))], [(0, 0), IterLies([1, 2]), TupleLies((3, 4))]):
    for name in ("cached_named_tuple_factory", "dict_factory", "ordered_dict_factory"):
        got = getattr(_rows, name)(cols, rows)
        assert got == getattr(_rows_py, name)(cols, rows), (name, got)
    want = query.named_tuple_factory(cols, rows)
    assert _rows.cached_named_tuple_factory(cols, rows) == want
    assert _rows.dict_factory(cols, rows) == query.dict_factory(cols, rows)
    assert _rows.ordered_dict_factory(cols, rows) == query.ordered_dict_factory(cols, rows)
    for typed in (lambda m: m.kwargs_row(dict), lambda m: m.args_row(lambda *v: v)):
        assert typed(_rows)(cols, rows) == typed(_typed_py)(cols, rows)
    assert _rows.kwargs_row(dict)(cols, rows) == query.dict_factory(cols, rows)
print("ok")
