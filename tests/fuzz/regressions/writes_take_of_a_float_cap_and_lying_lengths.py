"""The write queue's ``take``: a ``cap`` that is not an integer was the compiled one's ``TypeError``
where the twin compared it (a float) or took it (an integer beyond 64 bits: ``OverflowError``
compiled); an item whose ``len`` lies (a ``bytes`` subclass saying ``sys.maxsize``) overflowed the
compiled sum of lengths, so items past the cap were joined (the twin stops there). Both now take
``cap`` through ``__index__`` (a float is a ``TypeError``), the sum cannot overflow, and a cap beyond
the C range is the twin's (clamped, it differed where a length is the largest there is)."""

import sys
from collections import deque

from pyfactories.connection import _writes
from pyfactories.connection import _writes_py


class Huge(bytes):
    def __len__(self):
        return sys.maxsize


class Negative(bytes):
    def __len__(self):
        return 0  # len() refuses a negative one


class Conn:
    _write_again = False

    def __init__(self, items):
        self.deque = deque(items)


def outcome(take, items, cap):
    conn = Conn(items)
    try:
        return ("ok", take(conn, cap), list(conn.deque))
    except Exception as exc:
        return ("error", type(exc), list(conn.deque))


cases = [
    ([b"a", b"b"], 3.7), ([b"a", b"b"], 2.0), ([b"a", b"b"], 10**30), ([b"a", b"b"], -10**30), ([b"a", b"b"], True),
    ([b"a", Huge(b"xyz"), b"c"], 100), ([b"a", b"b", Huge(b"xyz")], 100), ([b"a", Huge(b"q"), Huge(b"r")], sys.maxsize),
    ([b"a", Negative(b"nn"), b"c"], 3), ([bytearray(b"ab"), memoryview(b"cd"), b"ef"], 5), ([b"a", "text"], 10),
    # a cap one beyond the C range, a length at its top: the twin's unbounded sums decide
    ([Huge(b""), b""], 2**63), ([Huge(b"p"), Huge(b"q")], 2**64), ([Huge(b"p"), b"x"], 2**63), ([b"a"], -2**63 - 1),
]
for items, cap in cases:
    want = outcome(_writes_py.take, items, cap)
    got = outcome(_writes.take, items, cap)
    assert got == want, (items, cap, got, want)
assert outcome(_writes.take, [b"a", b"b"], 3.7)[:2] == ("error", TypeError)
assert outcome(_writes.take, [b"a", Huge(b"xyz"), b"c"], 100)[1] == b"a"
print("ok")
