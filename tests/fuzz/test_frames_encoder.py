"""Requests out: ``encode_message`` and ``send_msg`` of the compiled ``pyfactories.connection._encoding``
against the twin ``pyfactories.connection._encoding_py`` and the driver's ``ProtocolHandler.encode_message`` /
``Connection.send_msg`` (on the driver's connections and on ones with their attributes as fields, whose
requests may replace the fields they are stored in), on messages whose fields are anything: values of the
wrong type, subclasses of ``int``/``str``/``bytes``/``list``/``tuple`` that lie, objects whose
``__bool__``/``__index__``/comparisons/``__len__`` change the message's values list (or the message) while
it is encoded.

A message is drawn as a recipe and built afresh for every run, so the compiled code, the twin and the
driver each see the same objects in the same state."""

from __future__ import annotations


from cassandra import segment as drv_segment
from cassandra.connection import Connection
from cassandra.protocol import ExecuteMessage, ProtocolHandler, QueryMessage, _UNSET_VALUE
from hypothesis import given
from hypothesis import strategies as st

from pyfactories.connection import _encoding, _fields, _fields_py
from pyfactories.connection import _encoding_py
from pyfactories.connection import _framing
from tests.fuzz.conftest import fuzz

FIELDS = ["query", "query_id", "result_metadata_id", "consistency_level", "query_params",
          "serial_consistency_level", "fetch_size", "paging_state", "timestamp", "keyspace", "tracing",
          "custom_payload", "continuous_paging_options", "skip_meta", "tablet_version_block"]
ACTS = ["grow", "shrink", "poison", "swap-list", "drop-attribute", "set-tracing"]


class State:
    """What the adversarial objects of one build act on: the message and its values list."""

    def __init__(self):
        self.msg = None
        self.params: list = []
        self.acting = False

    def act(self, how: str) -> None:
        if self.acting:  # an act that reads the message (an adversarial key) acts once
            return
        self.acting = True
        try:
            self._act(how)
        finally:
            self.acting = False

    def _act(self, how: str) -> None:
        p = self.params
        if how in ("grow", "shrink", "poison") and not isinstance(p, list):
            return  # the values are a tuple: nothing to change
        if how == "grow":
            p.extend([b"G" * 5000] * 20)
            if p:
                p[0] = b"X" * 70000
        elif how == "shrink":
            p.clear()
        elif how == "poison":
            p[:] = [object(), 1.5, "text", bytearray(b"b")]
        elif how == "swap-list":
            self.msg.query_params = [b"other"] * 3
        elif how == "drop-attribute":
            self.msg.__dict__.pop("query_params", None)
        elif how == "set-tracing":
            self.msg.tracing = object()


def _adversaries(state: State, how: str, value):
    """Classes whose dunders run ``state.act(how)``, bound to this build's state."""

    class Bool:
        def __bool__(self):
            state.act(how)
            return bool(value)

        def __index__(self):
            state.act(how)
            return int(value or 0)

    class Int(int):
        def __bool__(self):
            state.act(how)
            return int.__bool__(self)

        def __lt__(self, other):
            state.act(how)
            return int(self) < other

        def __le__(self, other):
            state.act(how)
            return int(self) <= other

        def __gt__(self, other):
            state.act(how)
            return int(self) > other

        def __ge__(self, other):
            state.act(how)
            return int(self) >= other

        def __index__(self):
            state.act(how)
            return int(self)

    class Str(str):
        def encode(self, *args):
            state.act(how)
            return str.encode(self, *args)

        def __len__(self):
            state.act(how)
            return 3

    class Bytes(bytes):
        def __len__(self):
            state.act(how)
            return 1

        def __bool__(self):
            state.act(how)
            return True

    class List(list):
        def __len__(self):
            state.act(how)
            return 1

        def __iter__(self):
            state.act(how)
            return iter([b"lie"])

    class Tuple(tuple):
        def __len__(self):
            state.act(how)
            return 0

    return {"bool": Bool, "int": Int, "str": Str, "bytes": Bytes, "list": List, "tuple": Tuple}


plain_values = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.integers(-5, 70000), st.floats(allow_nan=False),
    st.text(max_size=8), st.binary(max_size=12), st.just("\ud800"), st.just(_UNSET_VALUE),
    st.builds(bytearray, st.binary(max_size=4)), st.just({}), st.just({"k": b"v"}), st.just(object()),
)
adversarial = st.tuples(st.just("adv"), st.sampled_from(["bool", "int", "str", "bytes", "list", "tuple"]),
                        st.sampled_from(ACTS), st.one_of(st.booleans(), st.integers(0, 5000)))
param_items = st.one_of(st.none(), st.just(_UNSET_VALUE), st.binary(max_size=20), st.binary(min_size=3000, max_size=3000),
                        plain_values.map(lambda v: ("plain", v)), adversarial)
params_recipe = st.one_of(
    st.none(),
    st.tuples(st.sampled_from(["list", "tuple"]), st.lists(param_items, max_size=8)),
    st.tuples(st.sampled_from(["list", "tuple"]), st.lists(st.one_of(st.none(), st.binary(max_size=30)), max_size=8)),
    adversarial.filter(lambda a: a[1] in ("list", "tuple")),
)
field_value = st.one_of(plain_values.map(lambda v: ("plain", v)), adversarial)
recipes = st.fixed_dictionaries({
    "kind": st.sampled_from(["query", "execute"]),
    "params": params_recipe,
    "overrides": st.one_of(st.just({}), st.dictionaries(st.sampled_from([f for f in FIELDS if f != "query_params"]),
                                                        field_value, max_size=3)),
    "evil_key": st.one_of(st.none(), st.none(), st.tuples(st.sampled_from(FIELDS), st.sampled_from(ACTS))),
    "fields": st.fixed_dictionaries({
        "consistency_level": st.sampled_from([1, 4, 6, 10]), "serial": st.sampled_from([None, 0, 8, 9]),
        "fetch_size": st.one_of(st.none(), st.integers(-3, 6000)), "paging_state": st.one_of(st.none(), st.binary(max_size=10)),
        "timestamp": st.one_of(st.none(), st.integers(-3, 2**64 + 3)), "keyspace": st.one_of(st.none(), st.text(max_size=6)),
        "tracing": st.booleans(),
    }),
})
versions = st.one_of(st.sampled_from([3, 4, 5, 5]), st.sampled_from([4, 5, 2, 6, 0x41, 0x42, True, 4.0, -1, 2**70]),
                     st.tuples(st.just("adv"), st.just("int"), st.sampled_from(ACTS), st.sampled_from([4, 5])))
streams = st.one_of(st.integers(-32768, 32767), st.integers(0, 200), st.integers(-2**40, 2**40),
                    st.sampled_from([1.0, True, None, "1"]),
                    st.tuples(st.just("adv"), st.just("int"), st.sampled_from(ACTS), st.integers(0, 100)))
compressors = st.sampled_from([None, None, None, None, "callable", 0, "", False])
betas = st.one_of(st.booleans(), st.booleans(), st.sampled_from([None, 0, 1, 2, "yes"]),
                  st.tuples(st.just("adv"), st.just("bool"), st.sampled_from(ACTS), st.booleans()))


def value_of(state: State, recipe):
    if isinstance(recipe, tuple) and recipe and recipe[0] == "plain":
        return recipe[1]
    if isinstance(recipe, tuple) and recipe and recipe[0] == "adv":
        _, kind, how, value = recipe
        cls = _adversaries(state, how, value)[kind]
        if kind == "bool":
            return cls()
        if kind == "int":
            return cls(int(value))
        if kind == "str":
            return cls("SELECT %d" % int(value))
        if kind == "bytes":
            return cls(b"v" * (int(value) % 50))
        if kind == "list":
            return cls([b"a", None, b"b" * (int(value) % 50)])
        return cls((b"a", b"b"))
    return recipe


def build(recipe: dict) -> State:
    state = State()
    f = recipe["fields"]
    if recipe["kind"] == "query":
        msg = QueryMessage("SELECT * FROM t", f["consistency_level"], f["serial"], f["fetch_size"], f["paging_state"],
                           f["timestamp"], keyspace=f["keyspace"])
    else:
        msg = ExecuteMessage(b"\x01" * 16, None, f["consistency_level"], f["serial"], f["fetch_size"],
                             f["paging_state"], f["timestamp"], result_metadata_id=b"\x02" * 16)
    msg.tracing = f["tracing"]
    state.msg = msg
    params = recipe["params"]
    if params is None:
        msg.query_params = None
    elif params[0] == "adv":
        msg.query_params = state.params = value_of(state, params)
    else:
        items = [value_of(state, item) for item in params[1]]
        state.params = items
        msg.query_params = items if params[0] == "list" else tuple(items)
    for name, value in recipe["overrides"].items():
        setattr(msg, name, value_of(state, value))
    if recipe["evil_key"] is not None:
        name, how = recipe["evil_key"]

        class Key(str):  # an attribute name whose comparisons run code: every attribute read may run it
            def __hash__(self):
                return hash(str(self))

            def __eq__(self, other):
                state.act(how)
                return str.__eq__(self, other)

        value = msg.__dict__.pop(name, None)
        msg.__dict__[Key(name)] = value
    return state


def outcome(fn, *args, **kwargs):
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as exc:
        return ("error", type(exc))


def compressor_of(c):
    return (lambda body: body) if c == "callable" else c


#: the connection's negotiated protocol features, on a driver whose encoder takes them (scylla-driver
#: 3.29.12): none, none of Scylla's extensions, or its metadata id and tablet extensions
features = st.sampled_from([None, "plain", "extensions"] if _encoding_py.FEATURES else [None])


def features_of(f):
    if f is None:
        return None
    from cassandra.protocol_features import ProtocolFeatures

    return ProtocolFeatures(use_metadata_id=f == "extensions", tablets_routing_v2=f == "extensions")


def drivers_encode(msg, stream, version, compressor, beta, protocol_features):
    extra = {"protocol_features": protocol_features} if _encoding_py.FEATURES else {}
    return ProtocolHandler.encode_message(msg, stream, version, compressor, beta, **extra)


@fuzz
@given(recipe=recipes, version=versions, stream=streams, compressor=compressors, beta=betas, feature=features)
def test_frames_encode_message_is_the_twins_and_the_drivers(recipe, version, stream, compressor, beta, feature):
    runs = {}
    for name, encode in (("twin", _encoding_py.encode_message), ("c", _encoding.encode_message)):
        state = build(recipe)
        runs[name] = outcome(encode, state.msg, value_of(state, stream), value_of(state, version),
                             compressor_of(compressor), value_of(state, beta), features_of(feature))
    assert runs["c"] == runs["twin"]
    got = runs["c"]
    # never an error but a missing attribute (an adversary deleted it): what is not encoded is None, the driver's
    assert got[0] == "ok" or got[1] is AttributeError
    if got[0] == "ok" and got[1] is not None:
        assert type(got[1]) is bytes
        state = build(recipe)
        want = outcome(drivers_encode, state.msg, value_of(state, stream), value_of(state, version),
                       compressor_of(compressor), value_of(state, beta), features_of(feature))
        if recipe["evil_key"] is None:  # the driver reads every field more than once, in its own order
            assert want == got
        assert len(got[1]) == 9 + int.from_bytes(got[1][5:9], "big")


class Sending(Connection):
    def __init__(self, version, codec=None, feature=None):
        super().__init__("127.0.0.1", protocol_version=version)
        if feature is not None:
            self.features = features_of(feature)
        self.pushed: list = []
        if codec is not None:
            self._is_checksumming_enabled, self._segment_codec = True, codec

    def push(self, data):
        self.pushed.append(data)


class Handler(ProtocolHandler):
    pass


class Replacing(dict):
    """A connection's requests whose store replaces the connection's requests, protocol version and compressor
    with objects of their own (what was read before it is freed unless the reader holds it)."""

    conn = None

    def __setitem__(self, key, value):
        conn, self.conn = self.conn, None
        super().__setitem__(key, value)
        if conn is not None:
            conn._requests = dict(self)
            conn.protocol_version = int(str(conn.protocol_version))
            conn.compressor = None


#: each implementation's connection base with its attributes as fields, as pyfactories' connections have it
FIELDS = {_encoding_py.send_msg: _fields_py.ConnectionFields, _encoding.send_msg: _fields.ConnectionFields}


@fuzz
@given(recipe=recipes, version=st.sampled_from([3, 4, 5]), codec=st.sampled_from(["none", "drivers", "ours", "ours-z", "ours-shifted"]),
       handler=st.sampled_from(["driver", "subclass", "subclass-header"]), state_of=st.sampled_from(["open", "busy"]),
       feature=features, fields=st.booleans(), replacing=st.booleans())
def test_frames_send_msg_is_the_twins(recipe, version, codec, handler, state_of, feature, fields, replacing):
    encoder = {"driver": ProtocolHandler, "subclass": Handler, "subclass-header": Handler}[handler]
    runs = []
    for send_msg in (_encoding_py.send_msg, _encoding.send_msg, Connection.send_msg):
        Handler._write_header = (staticmethod(lambda f, v, fl, s, o, n: ProtocolHandler._write_header(f, v, fl | 0x40, s, o, n))
                                 if handler == "subclass-header" else ProtocolHandler._write_header)
        codecs = {"none": None, "drivers": drv_segment.SegmentCodec(), "ours": _framing.SegmentCodec(),
                  "ours-z": _framing.SegmentCodec(lambda b: b"\x00\x00\x00\x00" + b, lambda b: b[4:]),
                  "ours-shifted": type("Shifted", (_framing.SegmentCodec,), {"FLAG_OFFSET": 19})()}
        bases = (FIELDS[send_msg], Sending) if fields and send_msg in FIELDS else (Sending,)
        conn = type("Conn", bases, {"send_msg": send_msg})(version if codecs[codec] is None else 5, codecs[codec],
                                                           feature)
        conn._socket_writable = state_of == "open"
        if replacing:
            conn._requests = Replacing()
            conn._requests.conn = conn
        state = build(recipe)
        got = outcome(conn.send_msg, state.msg, 3, cb="cb", encoder=encoder.encode_message, decoder="dec")
        runs.append((got, conn.pushed, sorted(conn._requests)))
    Handler._write_header = ProtocolHandler._write_header
    assert runs[1] == runs[0]
    if recipe["evil_key"] is None and runs[1][0][0] == "ok":
        assert runs[1] == runs[2]  # the driver's own send_msg, where it is deterministic
