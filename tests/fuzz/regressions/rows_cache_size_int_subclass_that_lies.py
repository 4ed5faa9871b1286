"""A cache size that is an int subclass whose comparisons say it is positive when it is -5.

The compiled cache stored -5 and evicted until it popped from an empty dict (a KeyError from
set_cache_size and from every later miss); the twin stored -5. Both now read the int's own value
and refuse it with the ValueError any other bad size gets.
"""
from pyfactories.rows import _rows_py
from pyfactories.rows import _rows


class Positive(int):
    def __lt__(self, other):
        return False

    def __gt__(self, other):
        return True

    def __index__(self):
        return 7

    def __int__(self):
        return 7


for module in (_rows, _rows_py):
    try:
        module.set_cache_size(Positive(-5))
    except ValueError:
        pass
    else:
        raise AssertionError(f"{module.__name__} took a size of -5: {module.cache_info()}")
    assert module.cache_info().maxsize == 1024
    assert module.cached_named_tuple_factory(["a"], [(1,)]) == [(1,)]
    module.set_cache_size(Positive(3))
    assert module.cache_info().maxsize == 3 and type(module.cache_info().maxsize) is int
    module.set_cache_size(1024)
print("ok")
