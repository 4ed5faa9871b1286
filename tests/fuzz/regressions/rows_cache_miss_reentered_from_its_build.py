"""A cache miss whose build calls back into the factories (a logging handler on the renaming warning).

The compiled cache built a new row class holding a non-reentrant lock; building an invalid column
list logs a warning, and a handler that used the factories again waited on that lock forever. Builds
now run outside the lock, as in the twin.
"""
import logging
import threading

from pyfactories.rows import _rows


class Reenter(logging.Handler):
    depth = 0

    def emit(self, record):
        if self.depth < 3:  # a new column list each time, itself logging again (three deep)
            self.depth += 1
            _rows.cached_named_tuple_factory(["if", f"x{self.depth}"], [(1, 2)])
            _rows.cache_clear()


handler = Reenter()
logging.getLogger("pyfactories").addHandler(handler)
result = []
worker = threading.Thread(target=lambda: result.append(_rows.cached_named_tuple_factory(["1a", "b"], [(1, 2)])),
                          daemon=True)
worker.start()
worker.join(30)
assert not worker.is_alive(), "deadlocked"
logging.getLogger("pyfactories").removeHandler(handler)
assert result and type(result[0][0])._fields == ("field_0_", "b"), result
assert tuple(result[0][0]) == (1, 2)
print("ok")
