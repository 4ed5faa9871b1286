"""``crc32(data, value)`` converted a float ``value`` to an integer (``3.7`` became 3) where
``zlib.crc32`` and the driver's ``compute_crc32`` raise ``TypeError``; ``crc24`` took an ``int``
subclass's comparisons at their word. Anything but ``bytes`` and an ``int`` (``crc32``), or two
``int`` (``crc24``), is now the driver's."""

import zlib

from cassandra import segment

from pyfactories.connection import _framing_py
from pyfactories.connection import _framing


def outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as exc:
        return ("error", type(exc))


class Liar(int):
    def __le__(self, other):
        return True

    def __ge__(self, other):
        return True

    def __lt__(self, other):
        return True

    def __gt__(self, other):
        return False


for value in (3.7, 0.0, 2**32 + 5, -1, True, Liar(2**40), Liar(7), "1", None):
    want = outcome(zlib.crc32, b"abc", value)
    assert outcome(segment.compute_crc32, b"abc", value) == want
    assert outcome(_framing.crc32, b"abc", value) == want, value
    assert outcome(_framing_py.crc32, b"abc", value) == want, value
for data, length in ((5, 3.7), (5, 3.0), (5.5, 3), (2**70, Liar(12)), (-7, Liar(9)), (123, True), ("x", 3),
                     (2**64 + 3, 8), (-1, 5)):
    want = outcome(segment.compute_crc24, data, length)
    assert outcome(_framing.crc24, data, length) == want, (data, length)
print("ok")
