"""``process_msg`` converted a header's fields to C integers: a stream id given as a float, a bool or
an int too large raised out of it (``TypeError``, ``OverflowError``) where the twin answers the
request (or hands the frame to the driver); a body that was not ``bytes`` raised too; a
connection whose ``_requests`` was another mapping than a ``dict`` was defuncted. Such a header,
body or mapping now takes the twin's steps; a request recorded as ``None`` is the twin's error."""

from cassandra.connection import Connection, _Frame
from cassandra.protocol import ProtocolHandler

from pyfactories.connection import _framing_py
from pyfactories.connection import _framing

VOID = b"\x00\x00\x00\x01"  # a RESULT of kind VOID


class Requests(dict):
    pass


class Conn(Connection):
    def __init__(self):
        super().__init__("127.0.0.1", protocol_version=4)
        self.events = []

    def defunct(self, exc):
        self.events.append(("defunct", type(exc).__name__))
        self.is_defunct = True


def run(process_msg, stream, body=VOID, requests=dict, entry="ok", version=4):
    conn = type("C", (Conn,), {"process_msg": process_msg})()
    conn._requests = requests()
    conn.request_ids.remove(3)
    cb = lambda response: conn.events.append(("callback", type(response).__name__))
    conn._requests[3] = (cb, ProtocolHandler.decode_message, None) if entry == "ok" else entry
    try:
        conn.process_msg(_Frame(version, 0, stream, 0x08, 9, 9 + len(body)), body)
    except Exception as exc:
        conn.events.append(("raised", type(exc).__name__))
    return conn.events, sorted(conn._requests), 3 in conn.request_ids, conn.msg_received


cases = [dict(stream=3.0), dict(stream=True), dict(stream=2**40), dict(stream=-2**40), dict(stream=3, body=bytearray(VOID)),
         dict(stream=3, requests=Requests), dict(stream=3, entry=None), dict(stream=3, entry=(1, 2)),
         dict(stream=3, version=4.0), dict(stream=3, version=2**70), dict(stream=3)]
for case in cases:
    want = run(_framing_py.process_msg, **case)
    got = run(_framing.process_msg, **case)
    assert got == want, (case, got, want)
    assert ("raised", "TypeError") not in got[0] and ("raised", "OverflowError") not in got[0]
print("ok")
