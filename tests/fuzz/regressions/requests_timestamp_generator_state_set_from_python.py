"""timestamp: a MonotonicTimestampGenerator whose ``last`` was set from Python (a float, a huge int, an int
subclass) gives what the driver's generator gives (or its error), and one whose instance has its own
``_next_timestamp`` is asked as the driver's ``__call__`` asks it."""

import time

from cassandra.timestamps import MonotonicTimestampGenerator

from pyfactories.futures import _futures
from pyfactories.futures import _futures_py


class Big(int):
    def __gt__(self, other):
        return True

    def __lt__(self, other):
        return True


def run(stamp, last, own):
    generator = MonotonicTimestampGenerator(warn_on_drift=False)
    generator.last = last
    if own:
        generator._next_timestamp = lambda now, last: 17
    try:
        value = stamp(generator)
    except Exception as exc:
        return "error", type(exc)
    # the clock moves between the two calls: only what does not depend on it is compared
    far = isinstance(generator.last, (int, float)) and generator.last > time.time() * 1e6 + 1e9
    return type(value), value if far or own else None, type(generator.last)


for last in (2.0**70, 1 << 200, Big(5), float("inf"), float("nan"), -1.5, 10**30 + 0.5, "x"):
    for own in (False, True):
        driver = run(lambda g: g(), last, own)
        assert run(_futures.timestamp, last, own) == driver, (last, own, driver)
        assert run(_futures_py.timestamp, last, own) == driver, (last, own, driver)
print("ok")
