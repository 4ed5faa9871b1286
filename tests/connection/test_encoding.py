"""Requests encoded by ``pyfactories.connection._encoding`` (id ``c``) and its twin ``pyfactories.connection._encoding_py``
(``py``), against the driver's ``ProtocolHandler.encode_message`` and ``Connection.send_msg``: the
same bytes for every EXECUTE and QUERY message, the driver's own encoding (and errors) for the rest."""

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
from pyfactories import decoding

MODULES = {"c": "pyfactories.connection._encoding", "py": "pyfactories.connection._encoding_py"}


@pytest.fixture(scope="module", params=sorted(MODULES), ids=sorted(MODULES))
def encoding(request):
    return importlib.import_module(MODULES[request.param])


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
                     result_metadata_id=st.binary(max_size=16), **common)
queries = st.builds(QueryMessage, query=st.one_of(st.text(max_size=60), st.binary(max_size=60)),
                    keyspace=st.one_of(st.none(), st.text(max_size=12)), **common)


@settings(max_examples=300)
@given(msg=st.one_of(executes, queries), version=st.sampled_from([3, 4, 5]), stream=st.integers(-32768, 32767),
       tracing=st.booleans(), beta=st.booleans())
def test_execute_and_query_frames_are_the_drivers(encoding, msg, version, stream, tracing, beta):
    msg.tracing = tracing
    want = outcome(ProtocolHandler.encode_message, msg, stream, version, None, beta)
    got = encoding.encode_message(msg, stream, version, None, beta)
    if want[0] == "ok":
        if msg.keyspace is None or version >= 5:
            assert got == want[1]  # encoded here, byte for byte
        else:
            assert got is None
    else:  # the driver's error: left to the driver's encoding, which raises it
        assert got is None


@pytest.mark.parametrize("case", ["options", "prepare", "custom-payload", "compressed-v4", "dse-version",
                                  "v2", "bytearray-value", "float-timestamp", "no-consistency",
                                  "stream-out-of-range", "keyspace-v4", "metadata-id-none"])
def test_what_is_left_to_the_driver(encoding, case):
    msg = ExecuteMessage(b"id", [b"v"], ConsistencyLevel.ONE, result_metadata_id=b"m")
    version, stream, compressor = 5, 1, None
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
    assert encoding.encode_message(msg, stream, version, compressor, False) is None


def test_common_requests_are_encoded_here(encoding):
    """What a prepared INSERT and a simple SELECT send is encoded by us, not left to the driver."""
    msgs = [ExecuteMessage(b"\x01" * 16, [b"\x00\x00\x00\x01", None, _UNSET_VALUE], ConsistencyLevel.LOCAL_ONE,
                           fetch_size=5000, timestamp=1700000000000000, result_metadata_id=b"\x02" * 16),
            QueryMessage("SELECT * FROM ks.t WHERE k = 1", ConsistencyLevel.ONE, fetch_size=5000)]
    for version in (4, 5):
        for msg in msgs:
            got = encoding.encode_message(msg, 7, version, None, False)
            assert got is not None and got == ProtocolHandler.encode_message(msg, 7, version, None, False)


class Sending(Connection):
    """A driver ``Connection`` without a socket that records what it pushes."""

    def __init__(self, version: int, codec=None):
        super().__init__("127.0.0.1", protocol_version=version)
        self.pushed: list[bytes] = []
        if codec is not None:
            self._is_checksumming_enabled, self._segment_codec = True, codec

    def push(self, data):
        self.pushed.append(data)


def _send(send_msg, version, codec, msg, state="open", encoder=ProtocolHandler.encode_message):
    conn = type("Conn", (Sending,), {"send_msg": send_msg})(version, codec)
    if state == "defunct":
        conn.is_defunct = True
    elif state == "closed":
        conn.is_closed = True
    elif state == "busy":
        conn._socket_writable = False
    got = outcome(conn.send_msg, msg, 3, cb="callback", encoder=encoder, decoder="decoder", result_metadata="meta")
    return got, conn.pushed, conn._requests


@pytest.mark.parametrize("codec", ["none", "drivers", "ours", "ours-compressed"])
@pytest.mark.parametrize("state", ["open", "defunct", "closed", "busy"])
@pytest.mark.parametrize("handler", ["driver", "fastpath", "custom"])
def test_send_msg_is_the_drivers(encoding, codec, state, handler):
    codecs = {"none": None, "drivers": drv_segment.SegmentCodec(), "ours": _framing.SegmentCodec(),
              "ours-compressed": _framing.SegmentCodec(lambda b: b"\x00\x00\x00\x00" + b, lambda b: b[4:])}

    class Custom(ProtocolHandler):
        @classmethod
        def encode_message(cls, msg, stream_id, protocol_version, compressor, allow_beta_protocol_version):
            return b"custom frame"

    encoder = {"driver": ProtocolHandler, "fastpath": decoding.handler("named"), "custom": Custom}[handler]
    version = 5 if codec != "none" else 4
    for msg in (ExecuteMessage(b"id", [b"x" * 300, None], ConsistencyLevel.ONE, result_metadata_id=b"m"),
                QueryMessage("SELECT 1", ConsistencyLevel.ONE), OptionsMessage()):
        want = _send(Connection.send_msg, version, codecs[codec], msg, state, encoder.encode_message)
        got = _send(encoding.send_msg, version, codecs[codec], msg, state, encoder.encode_message)
        assert got == want


def test_a_large_request_is_cut_into_the_drivers_segments(encoding):
    msg = ExecuteMessage(b"id", [b"x" * 300_000], ConsistencyLevel.ONE, result_metadata_id=b"m")
    codec = _framing.SegmentCodec()
    want = _send(Connection.send_msg, 5, drv_segment.SegmentCodec(), msg)
    got = _send(encoding.send_msg, 5, codec, msg)
    assert got == want and len(got[1][0]) > 2 * drv_segment.Segment.MAX_PAYLOAD_LENGTH
    buf = io.BytesIO()
    drv_segment.SegmentCodec().encode(buf, ProtocolHandler.encode_message(msg, 3, 5, None, False))
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
