"""A rows list (or tuple) subclass whose __iter__/__len__/__getitem__ disagree with its storage.

The compiled factories sized it by its storage and read it with __getitem__, where the driver and the
twin iterate it: other rows (or an IndexError). Now a subclass is read once, through its iteration.
"""
from cassandra import query

from pyfactories.rows import _typed_py as _classrows
from pyfactories.rows import _rows_py as _python
from pyfactories.rows import _rows as _speedups


class Rows(list):
    def __iter__(self):
        return iter([(5, 6), (7, 8)])

    def __len__(self):
        return 1

    def __getitem__(self, i):
        return (0, 0)


class RowsTuple(tuple):
    def __iter__(self):
        return iter([(9, 9)])


cols = ["a", "b"]
for rows in (Rows([(1, 2)]), RowsTuple(((1, 2), (3, 4)))):
    for name in ("cached_named_tuple_factory", "dict_factory", "ordered_dict_factory"):
        assert getattr(_speedups, name)(cols, rows) == getattr(_python, name)(cols, rows), name
    assert _speedups.cached_named_tuple_factory(cols, rows) == query.named_tuple_factory(cols, rows)
    assert _speedups.dict_factory(cols, rows) == query.dict_factory(cols, rows)
    for typed in (lambda m: m.kwargs_row(dict), lambda m: m.args_row(lambda *v: v)):
        assert typed(_speedups)(cols, rows) == typed(_classrows)(cols, rows)
print("ok")
