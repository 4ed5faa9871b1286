/* Reading a RESULT body (native protocol v4/v5) for _fastpath.pyx: [int],
 * [short], [string] and [option] type specs, each checked against the end of
 * the body. A body that ends too soon or nests types too deeply raises the
 * exception class given to pf_reader_init (_fastpath's MalformedResult).
 *
 * Declared for Cython in result_reader.pxd.
 */
#ifndef PF_RESULT_READER_H
#define PF_RESULT_READER_H

#include <Python.h>
#include <stdint.h>

#define PF_MAX_TYPE_DEPTH 64

typedef struct {
    const char *buf;
    Py_ssize_t pos;
    Py_ssize_t size;
} pf_reader;

static PyObject *pf_malformed_result = NULL;  /* the exception raised for a malformed body */

/* At module import, before any reading: keeps the exception class. */
static void pf_reader_init(PyObject *malformed_result) {
    Py_INCREF(malformed_result);
    Py_XDECREF(pf_malformed_result);
    pf_malformed_result = malformed_result;
}

/* The next `n` bytes, stepped over; NULL with the exception set if the body has fewer. */
static const char *pf_take(pf_reader *r, Py_ssize_t n) {
    const char *p;
    /* the position is checked too: a reader set up from a caller's offset never reads outside the body */
    if (r->pos < 0 || r->pos > r->size || n < 0 || n > r->size - r->pos) {
        PyErr_Format(pf_malformed_result, "RESULT body truncated: %zd bytes wanted at offset %zd of %zd",
                     n, r->pos, r->size);
        return NULL;
    }
    p = r->buf + r->pos;
    r->pos += n;
    return p;
}

/* An [int]; -1 with the exception set on error (check PyErr_Occurred: -1 is also a value). */
static int32_t pf_read_int(pf_reader *r) {
    const unsigned char *p = (const unsigned char *)pf_take(r, 4);
    if (p == NULL) return -1;
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
}

/* A [short] (0..65535), or -1 with the exception set. */
static int pf_read_short(pf_reader *r) {
    const unsigned char *p = (const unsigned char *)pf_take(r, 2);
    if (p == NULL) return -1;
    return (p[0] << 8) | p[1];
}

/* Steps over a [string]: 0, or -1 with the exception set. */
static int pf_skip_string(pf_reader *r) {
    int n = pf_read_short(r);
    if (n < 0 || pf_take(r, n) == NULL) return -1;
    return 0;
}

/* Steps over one [option] type spec (the driver parses it for real on a cache
 * miss): 0, or -1 with the exception set. */
static int pf_skip_type(pf_reader *r, int depth) {
    int code, i, n;
    if (depth > PF_MAX_TYPE_DEPTH) {
        PyErr_SetString(pf_malformed_result, "RESULT metadata nests types too deeply");
        return -1;
    }
    code = pf_read_short(r);
    if (code < 0) return -1;
    if (code == 0x0000) {  /* custom: class name */
        return pf_skip_string(r);
    } else if (code == 0x0020 || code == 0x0022) {  /* list, set */
        return pf_skip_type(r, depth + 1);
    } else if (code == 0x0021) {  /* map */
        if (pf_skip_type(r, depth + 1) < 0) return -1;
        return pf_skip_type(r, depth + 1);
    } else if (code == 0x0030) {  /* user-defined type: keyspace, name, then each field's name and type */
        if (pf_skip_string(r) < 0 || pf_skip_string(r) < 0) return -1;
        if ((n = pf_read_short(r)) < 0) return -1;
        for (i = 0; i < n; i++) {
            if (pf_skip_string(r) < 0 || pf_skip_type(r, depth + 1) < 0) return -1;
        }
    } else if (code == 0x0031) {  /* tuple */
        if ((n = pf_read_short(r)) < 0) return -1;
        for (i = 0; i < n; i++) {
            if (pf_skip_type(r, depth + 1) < 0) return -1;
        }
    }
    return 0;
}

#endif  /* PF_RESULT_READER_H */
