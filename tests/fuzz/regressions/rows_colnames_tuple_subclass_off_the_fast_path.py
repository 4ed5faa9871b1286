"""A colnames tuple subclass whose __getitem__ returns the previous result's column names.

The cache's fast path (same columns as the last result) read a tuple subclass with __getitem__ and
handed back the previous column list's row class: rows named after other columns. A subclass is now
read through its iteration, like the driver's factories and the twin.
"""
from cassandra import query

from pyfactories.rows import _rows_py
from pyfactories.rows import _rows


class Lies(tuple):
    def __getitem__(self, i):
        return ("a", "b")[i]


_rows.cached_named_tuple_factory(["a", "b"], [(1, 2)])
_rows.dict_factory(["a", "b"], [(1, 2)])
names = Lies(("x", "y"))
rows = [(1, 2)]
got = _rows.cached_named_tuple_factory(names, rows)
assert type(got[0])._fields == ("x", "y"), type(got[0])._fields
assert type(got[0])._fields == type(query.named_tuple_factory(list(names), rows)[0])._fields
assert got == _rows_py.cached_named_tuple_factory(names, rows)
assert _rows.dict_factory(names, rows) == [{"x": 1, "y": 2}] == _rows_py.dict_factory(names, rows)
print("ok")
