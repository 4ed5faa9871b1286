# Included by _futures.pyx: the attributes of a lean future kept in C (pyfactories.futures._futures_py's
# FutureFields; its docstring is the specification).

#: the driver's class defaults of the fields that are not None
cdef object _DEFAULT_HANDLER = ResponseFuture._protocol_handler
cdef object _DEFAULT_SPECULATION = ResponseFuture._spec_execution_plan


cdef class FutureFields:
    """``pyfactories.futures._futures_py.FutureFields``: each attribute of its ``FIELDS`` a field of the
    object, read and written through its descriptor from Python, and directly by this module's steps."""

    cdef public object session, row_factory, message, query, timeout, prepared_statement, query_plan
    cdef public object attempted_hosts, coordinator_host, request_encoded_size
    cdef public object _load_balancer, _retry_policy, _metrics, _callback_lock, _start_time, _host
    cdef public object _spec_execution_plan, _event, _errors, _timer, _continuous_paging_state
    cdef public object _current_host, _connection, _req_id, _protocol_handler
    cdef public object _warnings, _custom_payload, _paging_state, _col_names, _col_types
    cdef public object _final_result, _final_exception, _callbacks, _errbacks, _pyfactories_awaiter

    def __cinit__(self, *args, **kwargs):
        # the driver's class attributes, as a future has them before its __init__ (None for the rest)
        self._final_result = _NOT_SET
        self._spec_execution_plan = _DEFAULT_SPECULATION
        self._protocol_handler = _DEFAULT_HANDLER
