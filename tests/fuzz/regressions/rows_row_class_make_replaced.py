"""A cached row class (reachable as type(row)) whose _make and __new__ are replaced by code.

The twin built its rows with the class's _make, so it answered whatever the replacement returned,
while the compiled rows are filled in C: two answers. Both now build the row as tuple.__new__ does.
"""
from cassandra import query

from pyfactories.rows import _rows_py
from pyfactories.rows import _rows

cols, rows = ["a", "b"], [(1, 2), (3, 4)]
for module in (_rows, _rows_py):
    Row = type(module.cached_named_tuple_factory(cols, rows)[0])
    Row._make = classmethod(lambda cls, iterable: "replaced")
    Row.__new__ = lambda cls, *args: "replaced"
want = query.named_tuple_factory(cols, rows)
got, twin = _rows.cached_named_tuple_factory(cols, rows), _rows_py.cached_named_tuple_factory(cols, rows)
assert got == twin == want, (got, twin, want)
assert [r._fields for r in got] == [r._fields for r in twin] == [r._fields for r in want]
print("ok")
