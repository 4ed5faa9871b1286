"""``send_msg`` cached, per handler class, whether its ``encode_message`` was the driver's, keyed by
the class alone: a handler whose ``_write_header`` was replaced after its first request still had
its frames written here, with the protocol's header instead of its own (a wrong frame on the wire).
It is now asked for every request, as the twin does."""

from cassandra.connection import Connection
from cassandra.protocol import ProtocolHandler, QueryMessage

from pyfactories.connection import _encoding
from pyfactories.connection import _encoding_py


class Handler(ProtocolHandler):
    pass


def marked_header(f, version, flags, stream_id, opcode, length):
    ProtocolHandler._write_header(f, version, flags | 0x40, stream_id, opcode, length)


def sent(send_msg):
    class Sending(Connection):
        def push(self, data):
            self.pushed.append(data)

    Sending.send_msg = send_msg
    conn = Sending("127.0.0.1", protocol_version=4)
    conn.pushed = []
    msg = QueryMessage("SELECT 1", 1)
    Handler._write_header = ProtocolHandler._write_header
    conn.send_msg(msg, 1, cb=None, encoder=Handler.encode_message)
    Handler._write_header = staticmethod(marked_header)
    conn.send_msg(msg, 2, cb=None, encoder=Handler.encode_message)
    return conn.pushed


want = sent(Connection.send_msg)
assert want[1][1] & 0x40  # the driver's encode_message wrote the handler's header
assert sent(_encoding_py.send_msg) == want
assert sent(_encoding.send_msg) == want
print("ok")
