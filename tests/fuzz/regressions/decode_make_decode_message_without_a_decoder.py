"""make_decode_message(None, ...) built a decode_message that called a method of None on the first ROWS
frame (a segfault); the decoder is now checked when the classmethod is made."""
from cassandra.protocol import ProtocolHandler

from pyfactories.decoding import _fastpath

try:
    _fastpath.make_decode_message(None, ProtocolHandler.decode_message.__func__, object)
except TypeError:
    pass
else:
    raise AssertionError("a decode_message without a decoder was made")
print("ok")
