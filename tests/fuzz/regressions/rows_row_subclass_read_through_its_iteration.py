"""Rows that are list/tuple subclasses whose __iter__, __getitem__ or __len__ disagree with their storage.

The compiled factories copied such a row's storage (and sized it by its storage), where the driver's
factories (Row(*row), zip(colnames, row)) and the pure-Python twin read what its iteration yields: a
different row. Now every factory reads a subclass row through its iteration, like the driver.
"""
from cassandra import query

from pyfactories.rows import _typed_py as _classrows
from pyfactories.rows import _rows_py as _python
from pyfactories.rows import _rows as _speedups


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
        got = getattr(_speedups, name)(cols, rows)
        assert got == getattr(_python, name)(cols, rows), (name, got)
    want = query.named_tuple_factory(cols, rows)
    assert _speedups.cached_named_tuple_factory(cols, rows) == want
    assert _speedups.dict_factory(cols, rows) == query.dict_factory(cols, rows)
    assert _speedups.ordered_dict_factory(cols, rows) == query.ordered_dict_factory(cols, rows)
    for typed in (lambda m: m.kwargs_row(dict), lambda m: m.args_row(lambda *v: v)):
        assert typed(_speedups)(cols, rows) == typed(_classrows)(cols, rows)
    assert _speedups.kwargs_row(dict)(cols, rows) == query.dict_factory(cols, rows)
print("ok")
