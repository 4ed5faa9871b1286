"""``SegmentCodec.decode_header`` turned whatever the buffer's ``read`` gave into bytes with
``bytes()`` (an ``int`` became that many zero bytes, decoded as a header) and trusted the ``len`` of
a ``bytes`` subclass (read past the bytes it held). Anything but ``bytes`` is now decoded as the
twin decodes it: the same header, or the same error."""

import io

from pyfactories.connection import _framing_py
from pyfactories.connection import _framing


class Reads:
    def __init__(self, value):
        self.value = value

    def read(self, n):
        return self.value


class Longer(bytes):
    def __len__(self):
        return 64


def outcome(codec, value):
    try:
        return ("ok", vars(codec.decode_header(Reads(value))))
    except Exception as exc:
        return ("error", type(exc), str(exc))


good = io.BytesIO()
_framing_py.SegmentCodec()._encode_segment(good, b"payload", True)
header = good.getvalue()[:6]
for value in (8, 6, Longer(b"\x01"), Longer(header), bytearray(header), memoryview(header), header + b"more",
              [1, 2, 3, 4, 5, 6], None, "text"):
    want = outcome(_framing_py.SegmentCodec(), value)
    got = outcome(_framing.SegmentCodec(), value)
    assert got == want, (value, got, want)
print("ok")
