# The value builders of fastpath_values.h, for _fastpath.pyx (`from fastpath_values cimport ...`).

from libc.stdint cimport int64_t

cdef extern from "fastpath_values.h":
    object pf_uuid_from_16(object uuid_type, object int_name, object is_safe_name, object is_safe, const char *p)
    int pf_timestamp_fields(int64_t ms, int *ymd_hms_us)

# Some of the driver's deserializers are a single CPython call on a copy of the value's bytes;
# for non-empty values of those columns (and only while the deserializer is the driver's own
# class) the decoder makes that call on the bytes in place, with the same result and the same
# exception. uuid and timeuuid: UUID(bytes=value) for 16-byte values (any other length still
# goes to the driver's deserializer, for its error); text: value.decode('utf8'); ascii:
# value.decode('ascii'); timestamp: cassandra-driver's arithmetic (pf_timestamp_fields) for 8-byte
# values in years 1..9999, where the installed driver computes the same (scylla-driver rounds otherwise).
cdef enum:
    DIRECT_NONE = 0
    DIRECT_UUID = 1
    DIRECT_UTF8 = 2
    DIRECT_ASCII = 3
    DIRECT_TIMESTAMP = 4
