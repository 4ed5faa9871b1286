/* The C layout of pyfactories.connection._fields.ConnectionFields: its fields in the order that class
   declares them (its module checks at import that every field is where this says), for the modules that
   read a connection's fields without an attribute lookup (connection_fields.pxd). */
#ifndef PYFACTORIES_CONNECTION_FIELDS_H
#define PYFACTORIES_CONNECTION_FIELDS_H

#include <Python.h>

typedef struct {
    PyObject_HEAD
    PyObject *is_defunct;
    PyObject *is_closed;
    PyObject *_socket_writable;
    PyObject *_requests;
    PyObject *protocol_version;
    PyObject *compressor;
    PyObject *decompressor;
    PyObject *allow_beta_protocol_version;
    PyObject *_is_checksumming_enabled;
    PyObject *lock;
    PyObject *in_flight;
    PyObject *max_request_id;
    PyObject *request_ids;
    PyObject *highest_request_id;
    PyObject *orphaned_request_ids;
    PyObject *orphaned_threshold_reached;
    PyObject *_continuous_paging_sessions;
    PyObject *msg_received;
    PyObject *user_type_map;
} PfConnectionFields;

/* The last class a module found plain, and its version tag then (one pair per module: static). */
static PyTypeObject *pf_fields_plain_type = NULL;
static unsigned int pf_fields_plain_tag = 0;

static inline int pf_fields_cached(PyObject *o) {
    PyTypeObject *t = Py_TYPE(o);
    return t == pf_fields_plain_type && t->tp_version_tag != 0 && t->tp_version_tag == pf_fields_plain_tag;
}

static inline void pf_fields_remember(PyObject *o) {
    PyTypeObject *t = Py_TYPE(o);
    pf_fields_plain_type = t;  /* borrowed: only compared, never followed */
    pf_fields_plain_tag = t->tp_version_tag;
}

/* Whether a class's attribute lookup and store are the generic ones (those of ConnectionFields, or
   object's): a class that defines __getattribute__, __getattr__ or __setattr__ has others. */
static inline int pf_fields_generic(PyTypeObject *cls, PyTypeObject *fields) {
    return (cls->tp_getattro == fields->tp_getattro || cls->tp_getattro == PyObject_GenericGetAttr)
        && (cls->tp_setattro == fields->tp_setattro || cls->tp_setattro == PyObject_GenericSetAttr);
}

#endif
