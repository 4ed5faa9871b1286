"""The fast decoder handed lying objects, and Python code that re-enters it, against the driver.

``result_metadata`` that lies (list and tuple subclasses whose ``__len__``, ``__iter__``, ``__bool__``,
``__getitem__`` lie or run code; entries that are tuple subclasses, lists, short tuples; names that are
str subclasses whose ``__eq__``/``__hash__`` run code); custom column types and UDT classes whose Python
code, run while rows are decoded, changes ``result_metadata``, clears the decoder's plans, decodes
another body on the same decoder or tries to set the decoder up anew; ``RowsDecoder`` called with files
that are not the driver's BytesIO; ``decode_message`` given int subclasses for its opcode and flags.
Each answer is the driver's, or an error where the driver's is one.
"""

import gc
import io
import struct

from cassandra import DriverException, cqltypes
from cassandra.protocol import ProtocolHandler
from hypothesis import given
from hypothesis import strategies as st

from pyfactories import _driver
from pyfactories import decoding
from tests.fuzz.conftest import fuzz
from tests.fuzz.decode_support import KINDS, RESULT, assert_same_outcome, build, decode
from tests.result_bodies import UDT, result_metadata

COLUMNS = [("k", cqltypes.Int32Type), ("s", cqltypes.UTF8Type), ("f", cqltypes.FloatType)]
ROWS = [[1, "a", 1.5], [2, "bb", None], [None, "", 0.25]]

# ---------------------------------------------------------------- lying result_metadata


class LenList(list):
    def __len__(self):
        return 7


class ShortLenList(list):
    def __len__(self):
        return 1


class FalsyList(list):
    def __bool__(self):
        return False


class IterLies(list):
    def __iter__(self):
        return iter(list.__getitem__(self, slice(0, 1)))


class GetitemLies(list):
    def __getitem__(self, i):
        return ("ks", "t", "x", cqltypes.BytesType)


class MutatingIter(list):
    def __iter__(self):
        items = list(list.__iter__(self))
        self.clear()
        self.extend(items[:1])
        return iter(items)


class LenTuple(tuple):
    def __len__(self):
        return 9


class LyingEntry(tuple):
    def __getitem__(self, i):
        return ("ks", "t", "z", cqltypes.BytesType)[i]


class LoudName(str):
    meta = None

    def __hash__(self):
        if self.meta is not None:
            self.meta.clear()
        return 1

    def __eq__(self, other):
        if self.meta is not None:
            self.meta.append(("ks", "t", "q", cqltypes.BytesType))
        return str.__eq__(self, other)


def _plain():
    return result_metadata(COLUMNS)


def _lying(name):
    """A fresh ``result_metadata`` of the kind ``name`` (fresh for each run: some change as they are read)."""
    plain = _plain()
    if name == "plain":
        return plain
    if name == "tuple":
        return tuple(plain)
    if name in ("len_list", "short_len_list", "falsy_list", "iter_lies", "getitem_lies", "mutating_iter"):
        cls = {"len_list": LenList, "short_len_list": ShortLenList, "falsy_list": FalsyList,
               "iter_lies": IterLies, "getitem_lies": GetitemLies, "mutating_iter": MutatingIter}[name]
        return cls(plain)
    if name == "len_tuple":
        return LenTuple(plain)
    if name == "lying_entries":
        return [LyingEntry(md) for md in plain]
    if name == "list_entries":
        return [list(md) for md in plain]
    if name == "short_entries":
        return [md[:3] for md in plain]
    if name == "long_entries":
        return [md + ("extra",) for md in plain]
    if name == "loud_names":
        meta = [(ks, t, LoudName(n), typ) for ks, t, n, typ in plain]
        for md in meta:
            md[2].meta = meta
        return meta
    if name == "empty":
        return []
    if name == "not_types":
        return [("ks", "t", "k", "int")] + plain[1:]
    raise AssertionError(name)


LYING = ["plain", "tuple", "len_list", "short_len_list", "falsy_list", "iter_lies", "getitem_lies", "mutating_iter",
         "len_tuple", "lying_entries", "list_entries", "short_entries", "long_entries", "loud_names", "empty",
         "not_types"]


@fuzz
@given(name=st.sampled_from(LYING), kind=st.sampled_from(KINDS), layout=st.sampled_from(["no_metadata", "zero"]),
       rows=st.integers(0, 3), protocol_version=st.sampled_from([4, 5]))
def test_lying_result_metadata_is_read_as_the_driver_reads_it(name, kind, layout, rows, protocol_version):
    body, _ = build(COLUMNS, ROWS[:rows], protocol_version, "no_metadata")
    if layout == "zero":  # a metadata section without columns: the driver takes result_metadata too
        body = body[:4] + struct.pack(">ii", 1, 0) + b"\x00\x02ks\x00\x01t" + body[12:]
    assert_same_outcome(kind, lambda: (body, _lying(name)), protocol_version)


# ---------------------------------------------------------------- code run while rows are decoded


class _Action:
    """What the Python code run by a column value does; set before each decode."""
    name = "nothing"
    meta = None
    kind = "tuple"
    depth = 0


def _act():
    action = _Action.name
    if action == "clear_meta" and _Action.meta is not None:
        _Action.meta.clear()
    elif action == "replace_meta" and _Action.meta is not None:
        _Action.meta[:] = [("ks", "t", "x", cqltypes.BytesType)] * 5
    elif action == "grow_meta" and _Action.meta is not None:
        _Action.meta.extend(_Action.meta * 3)
    elif action == "clear_plans":
        for kind in KINDS:
            decoding.handler(kind).message_types_by_opcode[RESULT].decoder.clear()
    elif action == "reinit_decoder":
        decoder = decoding.handler(_Action.kind).message_types_by_opcode[RESULT].decoder
        try:
            decoder.__init__(0, None, None)
        except TypeError:
            pass
    elif action == "reenter" and _Action.depth < 2:
        _Action.depth += 1
        try:
            other, _ = build([("x", cqltypes.Int32Type)] * 4, [[1, 2, 3, 4]] * 3, 5, "global")
            decode(decoding.handler(_Action.kind), other, 5, None)
            meta = result_metadata([("y", cqltypes.UTF8Type)])
            other, _ = build([("y", cqltypes.UTF8Type)], [["z"]], 5, "no_metadata")
            decode(decoding.handler(_Action.kind), other, 5, meta)
        finally:
            _Action.depth -= 1
    elif action == "collect":
        gc.collect()
    elif action == "walk_lists":  # what a memory profiler does: every list the collector tracks, read
        for obj in gc.get_objects():
            if type(obj) is list:
                list(obj)


class Spy(cqltypes.CassandraType):
    """A custom column type: its values are decoded by Python code (the driver's GenericDeserializer)."""
    typename = "org.pyfactories.Spy"

    @staticmethod
    def deserialize(byts, protocol_version):
        _act()
        return bytes(byts)

    @staticmethod
    def serialize(val, protocol_version):
        return bytes(val)


class Address:
    def __init__(self, street, zip):
        _act()
        self.street, self.zip = street, zip

    def __eq__(self, other):
        return type(other) is Address and (self.street, self.zip) == (other.street, other.zip)

    def __repr__(self):
        return f"Address({self.street!r}, {self.zip!r})"


ACTIONS = ["nothing", "clear_meta", "replace_meta", "grow_meta", "clear_plans", "reinit_decoder", "reenter", "collect",
           "walk_lists"]


@fuzz
@given(action=st.sampled_from(ACTIONS), kind=st.sampled_from(KINDS), rows=st.integers(1, 4),
       where=st.sampled_from(["custom_type_prepared", "udt_class"]))
def test_code_run_by_values_changes_nothing_the_decoder_reads(action, kind, rows, where, frozen_heap):
    _Action.name, _Action.kind = action, kind
    if where == "custom_type_prepared":
        columns = [("k", cqltypes.Int32Type), ("spy", Spy), ("s", cqltypes.UTF8Type)]
        values = [[i, b"\x01\x02", "t%d" % i] for i in range(rows)]
        body, _ = build(columns, values, 5, "no_metadata")

        def make():
            meta = result_metadata(columns)
            _Action.meta = meta
            return body, meta
    else:
        columns = [("k", cqltypes.Int32Type), ("addr", UDT)]
        values = [[i, UDT.tuple_type("main", i)] for i in range(rows)]
        body, _ = build(columns, values, 5, "global")

        def make():
            _Action.meta = None
            return body, None
    user_types = {"ks": {"address": Address}}
    try:
        _assert_same_with_user_types(kind, make, user_types)
    finally:
        _Action.name, _Action.meta = "nothing", None
        UDT.mapped_class = None


def _assert_same_with_user_types(kind, make, user_types):
    from tests.fuzz.decode_support import FACTORY, _rows_view

    body, meta = make()
    try:
        msg = decode(ProtocolHandler, body, 5, meta, user_types)
        expected = ("rows", _rows_view(kind, FACTORY[kind](msg.column_names, msg.parsed_rows)), msg.column_names)
    except Exception as exc:  # noqa: BLE001
        expected = ("error", exc)
    for _ in range(2):
        body, meta = make()
        try:
            msg = decode(decoding.handler(kind), body, 5, meta, user_types)
            got = ("rows", _rows_view(kind, msg.parsed_rows), msg.column_names)
        except Exception as exc:  # noqa: BLE001
            got = ("error", exc)
        if expected[0] == "error":
            assert got[0] == "error" and isinstance(got[1], DriverException), (got, expected)
        else:
            assert got == expected


# ---------------------------------------------------------------- files and arguments that are not the driver's


class LyingBytesIO(io.BytesIO):
    def getvalue(self):
        return b"\x00\x00\x00\x04\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x04abcd"


class NoneBytesIO(io.BytesIO):
    def getvalue(self):
        return None


class FarTell(io.BytesIO):
    def __init__(self, body, at):
        super().__init__(body)
        self.at = at

    def tell(self):
        return self.at


FILES = ["bytesio", "lying_getvalue", "none_getvalue", "tell_negative", "tell_past_end", "tell_huge", "not_a_file"]


def _file(name, body, start):
    if name == "bytesio":
        f = io.BytesIO(body)
    elif name == "lying_getvalue":
        f = LyingBytesIO(body)
    elif name == "none_getvalue":
        f = NoneBytesIO(body)
    elif name == "tell_negative":
        f = FarTell(body, -1000)
    elif name == "tell_past_end":
        f = FarTell(body, len(body) + 8)
    elif name == "tell_huge":
        f = FarTell(body, 2**62)
    else:
        return object()
    f.seek(start)
    return f


@fuzz
@given(name=st.sampled_from(FILES), kind=st.sampled_from(KINDS), prepared=st.booleans())
def test_rows_decoder_called_with_any_file(name, kind, prepared):
    body, _ = build(COLUMNS, ROWS, 5, "no_metadata" if prepared else "global")
    meta = _plain() if prepared else None
    driver_message = ProtocolHandler.message_types_by_opcode[RESULT]
    ours = decoding.handler(kind).message_types_by_opcode[RESULT]
    from tests.fuzz.decode_support import FACTORY, _rows_view

    try:
        msg = driver_message(2)
        msg.recv_results_rows(_file(name, body, 4), 5, {}, meta, None)
        expected = ("rows", _rows_view(kind, FACTORY[kind](msg.column_names, msg.parsed_rows)))
    except Exception as exc:  # noqa: BLE001
        expected = ("error", exc)
    try:
        msg = ours.__new__(ours)
        ours.decoder(msg, _file(name, body, 4), 5, {}, meta, None)
        got = ("rows", _rows_view(kind, msg.parsed_rows))
    except Exception as exc:  # noqa: BLE001
        got = ("error", exc)
    if expected[0] == "error":
        assert got[0] == "error" and isinstance(got[1], DriverException), (got, expected)
    else:
        assert got == expected


class LyingInt(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__


@fuzz
@given(opcode=st.sampled_from([8, LyingInt(8), LyingInt(0x0E), LyingInt(5)]),
       flags=st.sampled_from([0, LyingInt(0), LyingInt(0x02)]), kind=st.sampled_from(KINDS))
def test_decode_message_opcode_and_flags_that_are_int_subclasses(opcode, flags, kind):
    body, _ = build(COLUMNS, ROWS, 5, "global")

    def run(handler):
        try:
            msg = _driver.decode_message(handler, 5, {}, 1, flags, opcode, body, None, None)
            return ("ok", type(msg).__name__.replace("Fastpath", "").replace(kind.capitalize(), ""),
                    getattr(msg, "kind", None))
        except Exception as exc:  # noqa: BLE001
            return ("error", exc)

    expected, got = run(ProtocolHandler), run(decoding.handler(kind))
    if expected[0] == "error":
        assert got[0] == "error", (got, expected)
    else:
        assert got[0] == "ok" and got[2] == expected[2], (got, expected)
