"""A slotted dataclass whose two fields are stored through one slot's member descriptor.

The direct fill stored both values at that slot's offset (the first reference leaked, never released),
where the constructor stores the second over the first. Two fields with one offset now take the
constructor.
"""
import dataclasses
import sys

from pyfactories.rows import _typed_py
from pyfactories.rows import _rows


@dataclasses.dataclass(slots=True)
class Two:
    a: object
    b: object


Two.a = Two.__dict__["b"]  # both names now write slot b
compiled, twin = _rows.class_row(Two), _typed_py.class_row(Two)
value = object()
before = sys.getrefcount(value)
for _ in range(50):
    rows = compiled(["a", "b"], [(value, 2)])
    assert [r.b for r in rows] == [2] == [r.b for r in twin(["a", "b"], [(value, 2)])]
del rows
assert sys.getrefcount(value) == before, (sys.getrefcount(value), before)
assert compiled._fills_slots(["a", "b"]) is False
print("ok")
