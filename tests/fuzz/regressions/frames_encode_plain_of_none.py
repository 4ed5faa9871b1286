"""``encode_plain(None)`` (the segments of an uncompressed codec, without a buffer) took ``None`` for
``bytes`` and read a size from past it: it returned a segment of garbage where the driver's codec
raises ``TypeError``. ``None`` is now refused with ``TypeError``, as anything else but ``bytes``."""

import io

from cassandra import segment

from pyfactories.connection import _framing


def outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as exc:
        return ("error", type(exc))


assert outcome(segment.SegmentCodec().encode, io.BytesIO(), None) == ("error", TypeError)
for value in (None, bytearray(b"x"), "text", 5):
    assert outcome(_framing.encode_plain, value) == ("error", TypeError), value
out = io.BytesIO()
segment.SegmentCodec().encode(out, b"payload")
assert _framing.encode_plain(b"payload") == out.getvalue()
print("ok")
