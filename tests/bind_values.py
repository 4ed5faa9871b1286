"""Column types and values for the bind tests: every CQL type of the integration schema, with values of it
(hypothesis strategies) and values of anything else."""

import datetime
import ipaddress
import uuid
from collections import namedtuple
from decimal import Decimal

from cassandra.cqltypes import Int32Type, UTF8Type, UserType, lookup_casstype
from cassandra.protocol import ColumnMetadata
from cassandra.query import UNSET_VALUE, PreparedStatement
from cassandra.util import Duration
from hypothesis import strategies as st

KS = "ks"


def ints(bits):
    half = 1 << (bits - 1)
    return st.one_of(st.integers(-half, half - 1), st.sampled_from([-half, half - 1]))


texts = st.one_of(st.text(max_size=20), st.sampled_from(["", "ascii", "ünï ✓ 🐍"]))
timestamps = st.one_of(
    st.datetimes(),
    st.datetimes(timezones=st.sampled_from([datetime.timezone.utc, datetime.timezone(datetime.timedelta(hours=-5))])),
    st.dates(),
    st.integers(-(2**62), 2**62),
)
ADDRESS = UserType.make_udt_class(KS, "address", ("street", "zip"), (UTF8Type, Int32Type))
Address = namedtuple("Address", ["street", "zip"])

#: CQL type -> (the driver's type class, values of it).
TYPES = {
    "int": ("Int32Type", ints(32)),
    "bigint": ("LongType", ints(64)),
    "counter": ("CounterColumnType", ints(64)),
    "smallint": ("ShortType", ints(16)),
    "tinyint": ("ByteType", ints(8)),
    "boolean": ("BooleanType", st.booleans()),
    "double": ("DoubleType", st.one_of(st.floats(), st.integers(-(2**53), 2**53))),
    "float": ("FloatType", st.floats(width=32)),
    "text": ("UTF8Type", texts),
    "varchar": ("VarcharType", texts),
    "ascii": ("AsciiType", st.text(st.characters(max_codepoint=127), max_size=20)),
    "blob": ("BytesType", st.one_of(st.binary(max_size=20), st.binary(max_size=4).map(bytearray))),
    "timestamp": ("DateType", timestamps),
    "uuid": ("UUIDType", st.uuids()),
    "timeuuid": ("TimeUUIDType", st.uuids(version=1)),
    "date": ("SimpleDateType", st.dates()),
    "time": ("TimeType", st.times()),
    "decimal": ("DecimalType", st.decimals(allow_nan=False, allow_infinity=False, places=4)),
    "varint": ("IntegerType", st.integers()),
    "inet": ("InetAddressType", st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6)).map(str)),
    "duration": ("DurationType", st.builds(Duration, st.integers(0, 99), st.integers(0, 99), st.integers(0, 10**12))),
    "list<int>": ("ListType(Int32Type)", st.lists(st.integers(-(2**31), 2**31 - 1), max_size=4)),
    "set<text>": ("SetType(UTF8Type)", st.sets(st.text(max_size=5), max_size=4)),
    "map<text, int>": ("MapType(UTF8Type,Int32Type)",
                       st.dictionaries(st.text(max_size=5), st.integers(-(2**31), 2**31 - 1), max_size=3)),
    "frozen<list<text>>": ("FrozenType(ListType(UTF8Type))", st.lists(st.text(max_size=5), max_size=3)),
    "tuple<int, text, double>": ("TupleType(Int32Type,UTF8Type,DoubleType)",
                                 st.tuples(st.integers(-(2**31), 2**31 - 1), st.text(max_size=5), st.floats())),
    "frozen<address>": (ADDRESS, st.builds(Address, st.text(max_size=5), st.integers(-(2**31), 2**31 - 1))),
    "vector<float, 3>": ("VectorType(FloatType,3)", st.lists(st.floats(width=32), min_size=3, max_size=3)),
    "vector<text, 2>": ("VectorType(UTF8Type,2)", st.lists(st.text(max_size=5), min_size=2, max_size=2)),
}  # fmt: skip


def type_class(cql: str) -> type:
    found = TYPES[cql][0]
    return found if isinstance(found, type) else lookup_casstype(found)


#: Values of any type, for any column: most are refused, as the driver refuses them.
anything = st.one_of(
    st.none(), st.just(UNSET_VALUE), st.integers(), st.booleans(), st.floats(), texts, st.binary(max_size=6),
    st.sampled_from([2**7, -(2**7) - 1, 2**15, 2**31, -(2**31) - 1, 2**63, -(2**63) - 1, 3.5e38, 1e300, "\ud800", "é"]),
    st.datetimes(), st.dates(), st.uuids(), st.decimals(allow_nan=False), st.lists(st.integers(), max_size=2),
    st.just(object()), st.just(ipaddress.ip_address("10.0.0.1")), st.just(Decimal("1.5")), st.just(uuid.uuid1()),
)


def prepared(cqls, routing=(0,), protocol=5, names=None, **attributes) -> PreparedStatement:
    """A prepared statement with one bind marker per CQL type of ``cqls`` (as the driver makes from a PREPARE
    response), its routing key made of the markers ``routing``."""
    names = names or [f"c{i}" for i in range(len(cqls))]
    meta = [ColumnMetadata(KS, "t", name, type_class(cql)) for name, cql in zip(names, cqls)]
    statement = PreparedStatement(meta, b"query-id", list(routing) if routing is not None else None,
                                  "INSERT ...", KS, protocol, None, None)
    for name, value in attributes.items():
        setattr(statement, name, value)
    return statement
