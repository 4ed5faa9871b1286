"""A rows list (or tuple) subclass whose __iter__/__len__/__getitem__ disagree with its storage.

The compiled factories sized it by its storage and read it with __getitem__, where the driver and the
twin iterate it: other rows (or an IndexError). Now a subclass is read once, through its iteration.
"""
from cassandra import query

from pyfactories.rows import _typed_py
from pyfactories.rows import _rows_py
from pyfactories.rows import _rows


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
        assert getattr(_rows, name)(cols, rows) == getattr(_rows_py, name)(cols, rows), name
    assert _rows.cached_named_tuple_factory(cols, rows) == query.named_tuple_factory(cols, rows)
    assert _rows.dict_factory(cols, rows) == query.dict_factory(cols, rows)
    for typed in (lambda m: m.kwargs_row(dict), lambda m: m.args_row(lambda *v: v)):
        assert typed(_rows)(cols, rows) == typed(_typed_py)(cols, rows)
print("ok")
