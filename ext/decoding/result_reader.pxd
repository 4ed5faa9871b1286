# The RESULT body reader of result_reader.h, for _fastpath.pyx (`from result_reader cimport ...`).

from libc.stdint cimport int32_t

cdef extern from "result_reader.h":
    ctypedef struct pf_reader:
        const char *buf
        Py_ssize_t pos
        Py_ssize_t size

    void pf_reader_init(object malformed_result)
    const char *pf_take(pf_reader *r, Py_ssize_t n) except NULL
    int32_t pf_read_int(pf_reader *r) except? -1
    int pf_read_short(pf_reader *r) except -1
    int pf_skip_string(pf_reader *r) except -1
    int pf_skip_type(pf_reader *r, int depth) except -1
