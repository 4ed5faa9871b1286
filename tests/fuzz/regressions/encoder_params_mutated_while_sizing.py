"""The encoder read the message's fields after sizing the values and before writing them: code run by
a field (``__bool__`` of ``tracing``, ``__index__`` of ``fetch_size``, a comparison of an ``int``
subclass) that changed the values list made it write past the frame it had sized (a heap overflow)
or read values already freed. Every field is now read once into an exact-typed local, the values
copied into a tuple, before anything is sized: the answer is the twin's (here: left to the driver)."""

from cassandra.protocol import ExecuteMessage, ProtocolHandler, QueryMessage

from pyfactories.connection import _encoding
from pyfactories.connection import _encoding_py

params = [b"a"]


def grow():
    params[0] = b"X" * 100000
    params.extend([b"Y" * 1000] * 50)


def shrink():
    params.clear()


def poison():
    params[:] = [object(), 1.5, "text"]


class Evil:
    def __init__(self, act, value=False):
        self.act, self.value = act, value

    def __bool__(self):
        self.act()
        return bool(self.value)

    def __index__(self):
        self.act()
        return 1


class EvilInt(int):
    act = None

    def __lt__(self, other):
        type(self).act()
        return int(self) < other

    def __le__(self, other):
        type(self).act()
        return int(self) <= other

    def __gt__(self, other):
        type(self).act()
        return int(self) > other

    def __ge__(self, other):
        type(self).act()
        return int(self) >= other

    def __bool__(self):
        type(self).act()
        return True


def message(kind):
    if kind == "query":
        m = QueryMessage("SELECT 1", 1, None, None, None, None, None)
    else:
        m = ExecuteMessage(b"id", None, 1, result_metadata_id=b"m")
    m.query_params = params
    return m


for act in (grow, shrink, poison):
    EvilInt.act = staticmethod(act)
    for field in ("tracing", "fetch_size", "serial_consistency_level", "timestamp", "paging_state", "keyspace"):
        for value in (Evil(act), Evil(act, True), EvilInt(5)):
            for kind in ("query", "execute"):
                for version in (4, 5):
                    results = []
                    for encode in (_encoding_py.encode_message, _encoding.encode_message):
                        params[:] = [b"a", None]
                        m = message(kind)
                        setattr(m, field, value)
                        results.append(encode(m, 1, version, None, False))
                    assert results[0] == results[1], (act, field, value, kind, version, results)
                    assert results[1] is None  # a field of a type that runs code: the driver's encoding

# the reviewer's case, and what the driver then sends: the values as they were when the body was written
m = message("query")
m.tracing = Evil(grow)
params[:] = [b"a"]
assert _encoding.encode_message(m, 1, 4, None, False) is None
params[:] = [b"a"]
assert _encoding_py.encode_message(m, 1, 4, None, False) is None
params[:] = [b"a"]
assert len(ProtocolHandler.encode_message(m, 1, 4, None, False)) == 31

# a well-behaved message is still encoded here, as the driver does
m = message("query")
params[:] = [b"a", None]
m.tracing, m.fetch_size = True, 100
assert _encoding.encode_message(m, 1, 4, None, True) == ProtocolHandler.encode_message(m, 1, 4, None, True)
print("ok")
