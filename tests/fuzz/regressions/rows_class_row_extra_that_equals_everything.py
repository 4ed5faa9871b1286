"""class_row(extra=...) given a str subclass equal to every string (and hashing like "error").

It passed the check as whichever choice it was compared with, and was kept as the factory's extra and
in the factories' registry key: 'zzz' meant 'error' to one comparison and 'ignore' to the next. The
choice is now read as the plain str it holds, and returned as one of the two choices.
"""
import dataclasses

from pyfactories.rows import _typed_py
from pyfactories.rows import _rows


class EqualsAll(str):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __hash__(self):
        return hash("error")


@dataclasses.dataclass
class User:
    id: int


for module in (_rows, _typed_py):
    try:
        module.class_row(User, extra=EqualsAll("zzz"))
    except ValueError:
        pass
    else:
        raise AssertionError(f"{module.__name__} took extra='zzz'")
    factory = module.class_row(User, extra=type("Plain", (str,), {})("ignore"))
    assert type(factory.extra) is str and factory.extra == "ignore"
    assert factory(["id", "other"], [(1, 2)]) == [User(1)]
print("ok")
