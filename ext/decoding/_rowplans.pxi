# The fast path's plans (one per column list: names, types, deserializers, row class) and the
# value builders they use, out of reach of Python code: included in ``_fastpath.pyx``.

cdef class Plan:
    """What decoding rows of one column list needs, built once per metadata.

    Everything is taken from one snapshot of the column metadata (an exact list or tuple of
    exact ``(keyspace, table, name, type)`` tuples, names exact ``str``), kept in tuples, and
    never changed after: the decoder sizes and indexes with it.
    """
    cdef readonly tuple column_metadata, names, types
    cdef tuple deserializers, keys
    cdef bytes direct  # per column: how a non-empty value is built without the deserializer (DIRECT_*)
    cdef object row_class, template, udts, source
    cdef Py_ssize_t ncols
    cdef int protocol_version, rows_kind
    cdef bint built, unrecognized  # unrecognized: a custom type the driver knows no class for (yet)

    def __init__(self, column_metadata, int rows_kind, int protocol_version, source=None):
        if self.built:
            raise TypeError("a Plan is built once")
        if rows_kind != _ROWS_NAMED and rows_kind != _ROWS_DICT and rows_kind != _ROWS_TUPLE:
            raise ValueError(f"unknown kind of rows: {rows_kind}")
        cdef tuple columns = _plain_columns(column_metadata)
        if columns is None:
            raise TypeError("column metadata must be a list or tuple of (keyspace, table, name, type) tuples")
        cdef Py_ssize_t ncols = len(columns)
        if ncols == 0:
            raise ValueError("a plan needs at least one column")
        cdef tuple names = tuple([(<tuple>md)[2] for md in columns])
        cdef tuple types = tuple([(<tuple>md)[3] for md in columns])
        cdef tuple deserializers = tuple(make_deserializers(types))
        if len(deserializers) != ncols or not all(isinstance(d, Deserializer) for d in deserializers):
            raise TypeError("the driver gave no deserializer for some column type")
        cdef bytes direct = bytes([_direct_kind(types[i], deserializers[i]) for i in range(ncols)])
        udts = tuple(_user_types(types))
        unrecognized = any(_unrecognized_types(types))
        row_class = template = None
        if rows_kind == _ROWS_NAMED:
            row_class = make_row_class(names)
            pf_adopt_row_class(row_class)
        elif rows_kind == _ROWS_DICT:
            template = dict.fromkeys(names)
        self.column_metadata, self.names, self.types = columns, names, types
        self.deserializers, self.direct, self.keys, self.udts = deserializers, direct, names, udts
        self.row_class, self.template, self.source = row_class, template, source
        self.ncols, self.rows_kind, self.protocol_version = ncols, rows_kind, protocol_version
        self.unrecognized = unrecognized
        self.built = True

    cdef void map_user_types(self, user_type_map) except *:
        """Point each UDT at the class registered for it now, as the driver's metadata parse does.

        The UDT type objects are shared by every cluster in the process, and the
        driver sets their ``mapped_class`` on each parse; a cached plan skips the
        parse, so it repeats that step.
        """
        for udt in self.udts:
            udt.mapped_class = user_type_map.get(udt.keyspace, {}).get(udt.typename)


cdef tuple _plain_columns(column_metadata):
    """A tuple snapshot of column metadata as the driver makes it, else None (what the decoder
    does not take on trust: another container, an entry that is not an exact tuple of at least
    four items, a name that is not an exact ``str``). Nothing here runs Python code."""
    cdef tuple columns
    if type(column_metadata) is list:
        columns = tuple(<list>column_metadata)
    elif type(column_metadata) is tuple:
        columns = <tuple>column_metadata
    else:
        return None
    for md in columns:
        if type(md) is not tuple or len(<tuple>md) < 4 or type((<tuple>md)[2]) is not str:
            return None
    return columns


cdef inline bint _same_columns(tuple snapshot, column_metadata):
    """Whether ``column_metadata`` (an exact list or tuple) still holds the very entries of ``snapshot``
    (exact tuples, so their contents cannot have changed either)."""
    cdef Py_ssize_t i, n = len(snapshot)
    if type(column_metadata) is list:
        if len(<list>column_metadata) != n:
            return False
        for i in range(n):
            if (<list>column_metadata)[i] is not snapshot[i]:
                return False
        return True
    if type(column_metadata) is tuple:
        if len(<tuple>column_metadata) != n:
            return False
        for i in range(n):
            if (<tuple>column_metadata)[i] is not snapshot[i]:
                return False
        return True
    return False


# What the decoder builds values with: C globals, out of reach of Python code (a module attribute
# can be rebound; pf_uuid_from_16 allocates an instance of _UUID in C).
cdef object _UUID = uuid.UUID
cdef object _UUID_INT = "int"
cdef object _UUID_IS_SAFE = "is_safe"
cdef object _SAFE_UNKNOWN = uuid.SafeUUID.unknown
cdef object _TIMEUUID_DESERIALIZE = TimeUUIDType.deserialize


cdef int _direct_kind(cqltype, deserializer) except -1:
    des = type(deserializer)
    if cqltype is UUIDType and des is DesUUIDType and _uuids_in_place:
        return DIRECT_UUID
    if cqltype is TimeUUIDType and TimeUUIDType.deserialize is _TIMEUUID_DESERIALIZE and _uuids_in_place:
        return DIRECT_UUID
    if des is DesUTF8Type or des is DesVarcharType:
        return DIRECT_UTF8
    if des is DesAsciiType:
        return DIRECT_ASCII
    if des is DesDateType and _timestamps_in_place:
        return DIRECT_TIMESTAMP
    return DIRECT_NONE


cdef bint _same_timestamps_as_the_driver() except -1:
    """Whether in-place timestamps are the installed driver's (probes: float vs exact, years 1, 9999)."""
    cdef Buffer buf
    cdef int f[7]
    des = make_deserializers([DateType])[0]
    for ms in (0, -1, 1_700_000_000_123, 253_402_214_399_999, -62_135_423_999_999, 4_102_444_800_001):
        b = int(ms).to_bytes(8, "big", signed=True)
        buf.ptr, buf.size = <char *>PyBytes_AS_STRING(b), 8
        if pf_timestamp_fields(ms, f) != 0 or (from_binary(<Deserializer>des, &buf, 4) !=
                                               datetime_new(f[0], f[1], f[2], f[3], f[4], f[5], f[6], None)):
            return False
    return True


cdef bint _same_uuids_as_the_driver() except -1:
    """Whether UUIDs built in place are the driver's: uuid.UUID is the standard library's class (a
    type whose instances are its two slots), and a probe decodes to an equal UUID of that class."""
    cdef Buffer buf
    if type(_UUID) is not type or getattr(_UUID, "__slots__", None) != ("int", "is_safe", "__weakref__"):
        return False
    des = make_deserializers([UUIDType])[0]
    b = bytes(range(16))
    buf.ptr, buf.size = <char *>PyBytes_AS_STRING(b), 16
    theirs = from_binary(<Deserializer>des, &buf, 4)
    ours = pf_uuid_from_16(_UUID, _UUID_INT, _UUID_IS_SAFE, _SAFE_UNKNOWN, buf.ptr)
    return type(theirs) is type(ours) and theirs == ours and theirs.is_safe == ours.is_safe


cdef bint _uuids_in_place = _same_uuids_as_the_driver()
cdef bint _timestamps_in_place = _same_timestamps_as_the_driver()
_TIMESTAMPS_IN_PLACE = _timestamps_in_place  # for reading (tests): the decoder uses the C global


def _unrecognized_types(types):
    """Yields True for each custom type (at any depth) the driver made up a class for: its parse of the
    same bytes gives another class once the application defines one of that name."""
    for t in types:
        if isinstance(t, type) and issubclass(t, _UnrecognizedType):
            yield True
        yield from _unrecognized_types(getattr(t, "subtypes", None) or ())


def _user_types(types):
    for t in types:
        if isinstance(t, type) and issubclass(t, UserType) and t.typename is not None:
            yield t
        yield from _user_types(getattr(t, "subtypes", None) or ())
