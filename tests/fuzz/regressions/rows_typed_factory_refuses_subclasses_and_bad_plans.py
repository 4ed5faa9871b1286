"""A TypedRowFactory subclass whose _plan returns None (or a plan whose positions lie).

The compiled factory read the plan's fields from whatever its cache returned: None was read as a plan
(garbage counts and positions). The class is now final, and a compiled plan checks what it copies.
"""
from pyfactories.rows import _typed_py
from pyfactories.rows import _rows

try:
    class Evil(_rows.TypedRowFactory):
        def _plan(self, key):
            return None
except TypeError:
    pass
else:
    raise AssertionError("TypedRowFactory can be subclassed")

for plan, error in (
    (_typed_py.Plan(1, (1000,), None), ValueError),
    (_typed_py.Plan(2, (0, -1), None), ValueError),
    (_typed_py.Plan(2, (0, 1), ("a",)), ValueError),
    (_typed_py.Plan(2, (0, 1), ("a", "a")), ValueError),
    (_typed_py.Plan(1, (0,), (5,)), ValueError),
    (_typed_py.Plan("1", (0,), None), TypeError),
    (None, TypeError),
):
    try:
        _rows._CompiledPlan(plan)
    except error:
        pass
    else:
        raise AssertionError(f"{plan} accepted")

factory = _rows.args_row(lambda *v: v)
factory.__init__("kwargs", dict, "", None)  # no effect: the factory keeps what it was made with
assert factory(["a", "b"], [(1, 2)]) == [(1, 2)]
print("ok")
