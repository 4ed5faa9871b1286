"""Categories by module and function, for py-spy recordings without the harness's region markers
(``attach``, or py-spy run on any client): the rules of :func:`profiling.sampling.categories.classify` in its
``by_module`` mode."""

from __future__ import annotations

from typing import Any

from ..factories import of_family

#: Coarser than the markers: with the driver's compiled modules, request encoding, the
#: request path and the frames and dispatch under a reactor's read handler are invisible
#: (protocol.so both encodes and decodes), and stay with the reactor (socket). What the
#: driver runs as Python is classified: its reactors (cassandra/io), the v5 segment codec,
#: and the standard library's futures, events and conditions it completes and wakes.
_BY_MODULE_NATIVE = {"row_parser": "deserialization", "obj_parser": "deserialization",
                     "deserializers": "deserialization", "cython_marshal": "deserialization",
                     "numpy_parser": "deserialization", "_rows": "row_factory",
                     "_framing": "framing", "_aio": "dispatch", "libevwrapper": "socket", "libev": "socket",
                     "_libev_turn": "socket"}
#: pyfactories' connection classes (``connection.cluster_options()``) as the driver's reactors are
#: classified: their timer service is timers, the twin of their compiled framing is framing, a
#: ``push`` of their coalesced writes is the request path, the rest of them (writes, the prepare
#: watcher that re-arms their reactor timer and does the driver's prepare step) is the reactor's,
#: socket. Before the rule that takes
#: the rest of the package for row factories.
_PYFACTORIES_CONNECTION = [
    ("pyfactories/connection/_timers_py.py", (), "timers"),
    ("pyfactories/connection/__init__.py", ("create_timer", "libev_timers", "_timers", "_wake", "_arm", "_on_timer"),
     "timers"),
    ("pyfactories/connection/__init__.py", (), "socket"),
    ("pyfactories/connection/_libev_turn_py.py", ("on_timer",), "timers"),
    ("pyfactories/connection/_libev_turn_py.py", (), "socket"),
    ("pyfactories/connection/_framing_py.py", (), "framing"),
    ("pyfactories/connection/_writes_py.py", ("push",), "request"),
    ("pyfactories/connection/_writes_py.py", (), "socket"),
    # the leaner futures (pyfactories.futures): taking an answer and finishing is dispatch, the rest
    # (building, planning, sending, adding callbacks) the request path
    ("pyfactories/futures/_futures_py.py", ("cassandra_set_result",), "dispatch"),
    ("pyfactories/futures/_pools_py.py", ("return_connection",), "dispatch"),
    ("pyfactories/futures/_scylla_py.py", ("set_result",), "dispatch"),
    ("pyfactories/futures/_callbacks_py.py", ("set_final_result", "set_final_exception", "_finish", "take_answer"),
     "dispatch"),
    ("pyfactories/futures/", (), "request"),
    # awaiting (pyfactories.aio): handing an answer to the loop and finishing its futures is dispatch, the
    # rest (awaiting, paging, cancelling) the request path
    ("pyfactories/aio/", ("on_result", "on_error", "wake", "post", "drain", "settle"), "dispatch"),
    ("pyfactories/aio/", (), "request"),
]
_BY_MODULE_PYTHON = [
    ("cassandra/protocol.py", ("decode_message", "recv_body", "recv_results_rows", "recv_results_metadata",
                               "recv_row", "read_value"), "deserialization"),
    ("cassandra/protocol.py", ("encode_message", "send_body", "write_value"), "encode"),
    ("cassandra/query.py", ("bind",), "encode"),
    ("cassandra/query.py", tuple(f.attr for f in of_family("driver")), "row_factory"),
    *_PYFACTORIES_CONNECTION,
    ("pyfactories/", (), "row_factory"),
    ("cassandra/segment.py", (), "framing"),
    ("cassandra/connection.py", ("process_io_buffer", "_process_segment_buffer", "_read_frame_header"),
     "framing"),
    ("cassandra/connection.py", ("process_msg",), "dispatch"),
    ("cassandra/connection.py", ("create_timer", "add_timer", "service_timeouts", "finish"), "timers"),
    ("cassandra/cluster.py", ("execute_async", "_create_response_future", "send_request", "_query"),
     "request"),
    ("cassandra/cluster.py", ("_set_result", "_set_final_result", "_set_final_exception"), "dispatch"),
    ("cassandra/io/", ("create_timer", "add_timer", "_update_timer", "_on_loop_timer",
                       "_call_delayed_coro"), "timers"),
    ("cassandra/io/", ("push",), "request"),
    ("cassandra/io/", (), "socket"),
    ("threading.py", ("set", "notify", "notify_all"), "dispatch"),
    ("concurrent/futures/_base.py", ("set_result", "set_exception", "_invoke_callbacks"), "dispatch"),
]


def by_module(frame: Any) -> str | None:
    """The category of a :class:`profiling.sampling.stacks.Frame` by its module and function, or None."""
    if not frame.python:
        lib = frame.file.rsplit("/", 1)[-1].split(".", 1)[0].split("-", 1)[0]
        return _BY_MODULE_NATIVE.get(lib)
    path = frame.file.replace("\\", "/")
    for part, names, category in _BY_MODULE_PYTHON:
        if part in path and (not names or frame.short in names):
            return category
    return None
