"""A dataclass whose field was renamed after the class was made, so two fields share one name.

The plan passed that name twice as a keyword: the compiled rows raised TypeError (multiple values for
one argument) where the twin built the row. A plan now passes each name once, in both.
"""
import dataclasses

from pyfactories.rows import _typed_py
from pyfactories.rows import _rows


@dataclasses.dataclass
class Renamed:
    a: object
    b: object = None


dataclasses.fields(Renamed)[1].name = "a"
rows = [(1,), (2,)]
got = _rows.class_row(Renamed)(["a"], rows)
want = _typed_py.class_row(Renamed)(["a"], rows)
assert got == want == [Renamed(1), Renamed(2)], (got, want)
print("ok")
