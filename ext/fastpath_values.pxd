# The value builders of fastpath_values.h, for _fastpath.pyx (`from fastpath_values cimport ...`).

from libc.stdint cimport int64_t

cdef extern from "fastpath_values.h":
    object pf_uuid_from_16(object uuid_type, object int_name, object is_safe_name, object is_safe, const char *p)
    int pf_timestamp_fields(int64_t ms, int *ymd_hms_us)
