"""Requests encoded by ``pyfactories.connection._encoding`` (id ``c``) and its twin ``pyfactories.connection._encoding_py``
(``py``), against the driver's ``ProtocolHandler.encode_message`` and ``Connection.send_msg``: the
same bytes for every EXECUTE and QUERY message, the driver's own encoding (and errors) for the rest.
On scylla-driver 3.29.12 the connection's protocol features vary too (Scylla's metadata id and tablet
extensions, negotiated or not); on the other releases the fields they govern are set and ignored."""

from __future__ import annotations

import importlib
import io

import pytest
from cassandra import ConsistencyLevel
from cassandra import segment as drv_segment
from cassandra.connection import Connection
from cassandra.protocol import (
    ExecuteMessage, OptionsMessage, PrepareMessage, ProtocolHandler, QueryMessage, _UNSET_VALUE,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from pyfactories.connection import _framing
from pyfactories.connection._encoding_py import FEATURES, LAST_ERROR
from pyfactories import decoding
from tests.connection_fields import fields_of

MODULES = {"c": "pyfactories.connection._encoding", "py": "pyfactories.connection._encoding_py"}


@pytest.fixture(scope="module", params=sorted(MODULES), ids=sorted(MODULES))
def encoding(request):
    return importlib.import_module(MODULES[request.param])


def driver_encode(msg, stream, version, compressor, beta, features=None):
    """The driver's ``encode_message``, given the connection's protocol features where it takes them."""
    extra = {"protocol_features": features} if FEATURES else {}
    return ProtocolHandler.encode_message(msg, stream, version, compressor, beta, **extra)


def protocol_features(use_metadata_id=False, tablets_routing_v2=False):
    """The features a scylla-driver connection negotiated (None on the other drivers, which have none)."""
    if not FEATURES:
        return None
    from cassandra.protocol_features import ProtocolFeatures

    return ProtocolFeatures(use_metadata_id=use_metadata_id, tablets_routing_v2=tablets_routing_v2)


def outcome(fn, *args, **kwargs):
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as exc:
        return ("error", type(exc), str(exc))


values = st.one_of(st.none(), st.just(_UNSET_VALUE), st.binary(max_size=40))
common = dict(
    consistency_level=st.sampled_from([ConsistencyLevel.ONE, ConsistencyLevel.QUORUM, ConsistencyLevel.LOCAL_ONE]),
    serial_consistency_level=st.sampled_from([None, 0, ConsistencyLevel.SERIAL, ConsistencyLevel.LOCAL_SERIAL]),
    fetch_size=st.one_of(st.none(), st.integers(0, 5000)),
    paging_state=st.one_of(st.none(), st.binary(max_size=30)),
    timestamp=st.one_of(st.none(), st.integers(-2**63, 2**64 + 1)),
)
executes = st.builds(ExecuteMessage, query_id=st.binary(min_size=1, max_size=16),
                     query_params=st.one_of(st.none(), st.lists(values, max_size=12)),
                     result_metadata_id=st.one_of(st.none(), st.binary(max_size=16)),
                     skip_meta=st.booleans(), **common)
features = st.one_of(st.none(), st.builds(protocol_features, st.booleans(), st.booleans()))
#: what Scylla's tablet extension writes after an EXECUTE's parameters (driver-valid and not)
tablet_blocks = st.one_of(st.none(), st.integers(-2, 258), st.just(True))
queries = st.builds(QueryMessage, query=st.one_of(st.text(max_size=60), st.binary(max_size=60)),
                    keyspace=st.one_of(st.none(), st.text(max_size=12)), **common)


@settings(max_examples=300)
@given(msg=st.one_of(executes, queries), version=st.sampled_from([3, 4, 5]), stream=st.integers(-32768, 32767),
       tracing=st.booleans(), beta=st.booleans(), features=features, block=tablet_blocks, skip=st.booleans())
def test_execute_and_query_frames_are_the_drivers(encoding, msg, version, stream, tracing, beta, features, block,
                                                   skip):
    msg.tracing, msg.tablet_version_block = tracing, block
    if type(msg) is QueryMessage:
        msg.skip_meta = skip
    want = outcome(driver_encode, msg, stream, version, None, beta, features)
    got = encoding.encode_message(msg, stream, version, None, beta, features)
    if want[0] == "ok":
        if msg.keyspace is None or version >= 5:
            assert got == want[1]  # encoded here, byte for byte
        else:
            assert got is None
    else:  # the driver's error: left to the driver's encoding, which raises it
        assert got is None


#: what each driver leaves to its own encoder (scylla-driver 3.29.12 writes an empty metadata id, and
#: its protocol features and the fields they govern are read as exactly as the others)
LEFT = ["options", "prepare", "custom-payload", "compressed-v4", "dse-version", "v2", "bytearray-value",
        "float-timestamp", "no-consistency", "stream-out-of-range", "keyspace-v4"]
LEFT += ["lying-features", "tablet-block-str", "skip-meta-str"] if FEATURES else ["metadata-id-none"]


@pytest.mark.parametrize("case", LEFT)
def test_what_is_left_to_the_driver(encoding, case):
    msg = ExecuteMessage(b"id", [b"v"], ConsistencyLevel.ONE, result_metadata_id=b"m")
    version, stream, compressor, features = 5, 1, None, protocol_features(True, True)
    if case == "options":
        msg = OptionsMessage()
    elif case == "prepare":
        msg = PrepareMessage("SELECT 1", None)
    elif case == "custom-payload":
        msg.custom_payload = {"k": b"v"}
    elif case == "compressed-v4":
        version, compressor = 4, (lambda b: b)
    elif case == "dse-version":
        version = 0x41
    elif case == "v2":
        version = 2
    elif case == "bytearray-value":
        msg.query_params = [bytearray(b"v")]
    elif case == "float-timestamp":
        msg.timestamp = 1.5
    elif case == "no-consistency":
        msg.consistency_level = None
    elif case == "stream-out-of-range":
        stream = 40000
    elif case == "keyspace-v4":
        msg = QueryMessage("SELECT 1", ConsistencyLevel.ONE, keyspace="ks")
        version = 4
    elif case == "metadata-id-none":
        msg.result_metadata_id = None
    elif case == "lying-features":
        features = LyingFeatures()
    elif case == "tablet-block-str":
        msg.tablet_version_block = "1"
    elif case == "skip-meta-str":
        msg.skip_meta = "yes"
    assert encoding.encode_message(msg, stream, version, compressor, False, features) is None


class LyingFeatures:
    """Protocol features whose flag is an object of the application's (its truth may run its code)."""
    use_metadata_id = [1]
    tablets_routing_v2 = False


def test_fields_of_extensions_not_negotiated_are_ignored(encoding):
    """Scylla's tablet byte and skip-metadata flag of an EXECUTE are written only where negotiated (and
    on cassandra-driver never): a field the frame does not carry is not read, whatever it holds."""
    msg = ExecuteMessage(b"id", [b"v"], ConsistencyLevel.ONE, result_metadata_id=b"m", skip_meta=True)
    msg.tablet_version_block = "not read"
    features = protocol_features()
    got = encoding.encode_message(msg, 1, 5, None, False, features)
    assert got is not None and got == driver_encode(msg, 1, 5, None, False, features)


def test_common_requests_are_encoded_here(encoding):
    """What a prepared INSERT and a simple SELECT send is encoded by us, not left to the driver."""
    msgs = [ExecuteMessage(b"\x01" * 16, [b"\x00\x00\x00\x01", None, _UNSET_VALUE], ConsistencyLevel.LOCAL_ONE,
                           fetch_size=5000, timestamp=1700000000000000, result_metadata_id=b"\x02" * 16),
            QueryMessage("SELECT * FROM ks.t WHERE k = 1", ConsistencyLevel.ONE, fetch_size=5000)]
    for version in (4, 5):
        for features in {protocol_features(), protocol_features(True, True)}:
            for msg in msgs:
                got = encoding.encode_message(msg, 7, version, None, False, features)
                assert got is not None and got == driver_encode(msg, 7, version, None, False, features)


class Sending(Connection):
    """A driver ``Connection`` without a socket that records what it pushes."""

    def __init__(self, version: int, codec=None, features=None):
        super().__init__("127.0.0.1", protocol_version=version)
        self.pushed: list[bytes] = []
        if codec is not None:
            self._is_checksumming_enabled, self._segment_codec = True, codec
        if features is not None:
            self.features = features

    def push(self, data):
        self.pushed.append(data)


def _send(send_msg, version, codec, msg, state="open", encoder=ProtocolHandler.encode_message, features=None,
          fields=None):
    """``fields``: a ``ConnectionFields`` class, the first base of the connection (as ours have it)."""
    conn = type("Conn", (fields, Sending) if fields else (Sending,), {"send_msg": send_msg})(version, codec, features)
    if state == "defunct":
        conn.is_defunct, conn.last_error = True, OSError("connection reset")
    elif state == "closed":
        conn.is_closed, conn.last_error = True, OSError("connection reset")
    elif state == "busy":
        conn._socket_writable = False
    got = outcome(conn.send_msg, msg, 3, cb="callback", encoder=encoder, decoder="decoder", result_metadata="meta")
    return got, conn.pushed, conn._requests


@pytest.mark.parametrize("codec", ["none", "drivers", "ours", "ours-compressed"])
@pytest.mark.parametrize("state", ["open", "defunct", "closed", "busy"])
@pytest.mark.parametrize("handler", ["driver", "fastpath", "custom"])
@pytest.mark.parametrize("extensions", [False, True], ids=["plain", "scylla-extensions"])
@pytest.mark.parametrize("with_fields", [False, True], ids=["dict", "fields"])
def test_send_msg_is_the_drivers(encoding, codec, state, handler, extensions, with_fields):
    codecs = {"none": None, "drivers": drv_segment.SegmentCodec(), "ours": _framing.SegmentCodec(),
              "ours-compressed": _framing.SegmentCodec(lambda b: b"\x00\x00\x00\x00" + b, lambda b: b[4:])}

    class Custom(ProtocolHandler):
        @classmethod
        def encode_message(cls, msg, stream_id, protocol_version, compressor, allow_beta_protocol_version,
                           **features):
            return b"custom frame"

    encoder = {"driver": ProtocolHandler, "fastpath": decoding.handler("named"), "custom": Custom}[handler]
    version = 5 if codec != "none" else 4
    features = protocol_features(extensions, extensions)
    execute = ExecuteMessage(b"id", [b"x" * 300, None], ConsistencyLevel.ONE, result_metadata_id=b"m", skip_meta=True)
    execute.tablet_version_block = 7
    for msg in (execute, QueryMessage("SELECT 1", ConsistencyLevel.ONE), OptionsMessage()):
        want = _send(Connection.send_msg, version, codecs[codec], msg, state, encoder.encode_message, features)
        got = _send(encoding.send_msg, version, codecs[codec], msg, state, encoder.encode_message, features,
                    fields_of(encoding) if with_fields else None)
        assert got == want
        if state in ("defunct", "closed"):  # scylla-driver names the connection's last error
            assert got[0][0] == "error" and ("connection reset" in got[0][2]) == LAST_ERROR


def test_a_large_request_is_cut_into_the_drivers_segments(encoding):
    msg = ExecuteMessage(b"id", [b"x" * 300_000], ConsistencyLevel.ONE, result_metadata_id=b"m")
    codec = _framing.SegmentCodec()
    want = _send(Connection.send_msg, 5, drv_segment.SegmentCodec(), msg)
    got = _send(encoding.send_msg, 5, codec, msg)
    assert got == want and len(got[1][0]) > 2 * drv_segment.Segment.MAX_PAYLOAD_LENGTH
    buf = io.BytesIO()
    drv_segment.SegmentCodec().encode(buf, driver_encode(msg, 3, 5, None, False, protocol_features()))
    assert got[1] == [buf.getvalue()]


def test_a_codec_whose_encode_is_replaced_gets_it_called(encoding):
    """The profiler times a connection's codec by replacing ``encode`` on its own copy."""
    codec, calls = _framing.SegmentCodec(), []
    plain = codec.encode

    def timed(buffer, msg):
        calls.append(len(msg))
        return plain(buffer, msg)

    codec.encode = timed
    msg = ExecuteMessage(b"id", [b"x"], ConsistencyLevel.ONE, result_metadata_id=b"m")
    got = _send(encoding.send_msg, 5, codec, msg)
    assert got == _send(Connection.send_msg, 5, drv_segment.SegmentCodec(), msg) and len(calls) == 1
