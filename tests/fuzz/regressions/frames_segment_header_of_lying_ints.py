"""``SegmentCodec.encode_header`` converted the header an ``int`` subclass's operators built to a
64-bit integer and wrote its low bytes: a value the twin (``int.to_bytes``) refuses with
``OverflowError`` was written truncated. A header that is not an ``int`` in range is now the twin's."""

import io

from pyfactories.connection import _framing_py
from pyfactories.connection import _framing


class Wide(int):
    def __and__(self, other):
        return 2**50 + 7

    def __or__(self, other):
        return Wide(int(self) | other)


class Negative(int):
    def __and__(self, other):
        return -3


class Odd(int):
    def __and__(self, other):
        return Odd(int(self) & other)


def outcome(codec, *args):
    out = io.BytesIO()
    try:
        codec.encode_header(out, *args)
        return ("ok", out.getvalue())
    except Exception as exc:
        return ("error", type(exc))


for args in ((Wide(5), 0, True), (Negative(5), 0, False), (Odd(9), 0, True), (5, Wide(3), True), (7, 0, Wide(1))):
    for compressed in (False, True):
        make = (lambda m: m.SegmentCodec(lambda b: b, lambda b: b)) if compressed else (lambda m: m.SegmentCodec())
        want = outcome(make(_framing_py), *args)
        got = outcome(make(_framing), *args)
        assert got == want, (args, compressed, got, want)
print("ok")
