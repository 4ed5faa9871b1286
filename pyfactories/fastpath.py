"""Named (or dict) rows built while decoding: one line to turn on per session.

    from pyfactories import fastpath
    fastpath.enable(session, rows="named")   # or rows="dict"
    ...
    fastpath.disable(session)                # back to the driver's path

What ``enable`` changes on that session, and only there:

* ``session.client_protocol_handler`` becomes a subclass of the driver's
  ``ProtocolHandler`` whose RESULT message decodes rows with
  ``pyfactories._fastpath``: metadata is cached per column list (or per
  prepared statement), values are decoded by the driver's own deserializers,
  and each row is built once, directly as a namedtuple (or dict);
* a request-init listener (``Session.add_request_init_listener``) gives every
  request the session starts (``execute``, ``execute_async``,
  ``execute_concurrent``, and their later pages) ``tuple_factory`` as its row
  factory, whatever execution profile it names, because the rows are already
  built. ``ResultSet.was_applied`` therefore keeps working. The driver's own
  internal queries (query traces, schema) keep the driver's handler.

The rows equal those of the driver's ``named_tuple_factory`` / ``dict_factory``
(field names included). Results that use a column encryption policy or DSE
continuous paging are decoded by the driver's own path and then given to
``cached_named_tuple_factory`` / ``dict_factory``. DSE graph queries are not
supported with ``rows="dict"``.

The compiled module depends on the driver's binary internals: it records a
digest of the driver's ``.pxd`` declarations it was built against, and runs on
the driver releases it is tested on (``pyfactories._driver.FASTPATH_RELEASES``,
cassandra-driver and scylla-driver) whose declarations are the same. With any
other driver, or one without its compiled extensions, importing this module
warns once and ``enable`` leaves the session on the driver's normal path
(returning False).
"""

from __future__ import annotations

import warnings

import cassandra
from cassandra import protocol
from cassandra.cluster import Session

from . import __impl__, _driver, _impl

ROWS = ("named", "dict")

_MISSING = object()


def _why_unavailable() -> str | None:
    if __impl__ != "cython":
        return "pyfactories runs its pure-Python implementation"
    if not getattr(protocol, "HAVE_CYTHON", False):
        return "the installed Cassandra driver has no compiled extensions"
    dist, version = _driver.distribution(), cassandra.__version__
    if version not in _driver.FASTPATH_RELEASES.get(dist, ()):
        releases = "; ".join(f"{d} {', '.join(v)}" for d, v in _driver.FASTPATH_RELEASES.items())
        return f"{dist} {version} is not a driver release it is tested on ({releases})"
    built = getattr(_impl.impl, "BUILT_AGAINST_PXD", None)
    if built is None or _driver.pxd_digest() != built:
        return (f"the compiled declarations of {dist} {version} differ from those of the driver it was built "
                f"against ({getattr(_impl.impl, 'BUILT_AGAINST_DRIVER', '?')})")
    return None


UNAVAILABLE_REASON = _why_unavailable()
if UNAVAILABLE_REASON is None:
    try:
        from . import _fastpath
    except ImportError as exc:
        UNAVAILABLE_REASON = f"pyfactories._fastpath could not be imported: {exc}"
AVAILABLE = UNAVAILABLE_REASON is None
#: The one warning of a fast path that is off (at import, and again from ``enable``).
OFF = (f"pyfactories.fastpath is off: {UNAVAILABLE_REASON}; sessions keep the driver's normal path. Install a "
       "driver release it is tested on, or rebuild pyfactories against the installed one, to use it.")
if not AVAILABLE:
    warnings.warn(OFF, RuntimeWarning, stacklevel=2)


def _make_handler(rows: str) -> type:
    from . import cached_named_tuple_factory, dict_factory

    kind = _fastpath.ROWS_NAMED if rows == "named" else _fastpath.ROWS_DICT
    base_message = protocol.ProtocolHandler.message_types_by_opcode[protocol.ResultMessage.opcode]
    factory = cached_named_tuple_factory if rows == "named" else dict_factory
    decoder = _fastpath.RowsDecoder(kind, base_message.recv_results_rows, factory)

    def recv_results_rows(self, f, protocol_version, user_type_map, result_metadata, column_encryption_policy):
        decoder(self, f, protocol_version, user_type_map, result_metadata, column_encryption_policy)

    name = rows.capitalize()
    message = type(f"Fastpath{name}ResultMessage", (base_message,), {"recv_results_rows": recv_results_rows, "decoder": decoder})
    opcodes = dict(protocol.ProtocolHandler.message_types_by_opcode)
    opcodes[message.opcode] = message
    base_decode = protocol.ProtocolHandler.decode_message.__func__
    namespace = {
        "message_types_by_opcode": opcodes,
        "decode_message": _fastpath.make_decode_message(decoder, base_decode, message,
                                                        _driver.takes_protocol_features()),
    }
    return type(f"Fastpath{name}ProtocolHandler", (protocol.ProtocolHandler,), namespace)


_HANDLERS: dict[str, type] = {rows: _make_handler(rows) for rows in ROWS} if AVAILABLE else {}


def handler(rows: str = "named") -> type:
    """The protocol handler class of the fast path (e.g. to ``decode_message`` a captured body)."""
    _check_rows(rows)
    if not AVAILABLE:
        raise RuntimeError(f"pyfactories.fastpath is off: {UNAVAILABLE_REASON}")
    return _HANDLERS[rows]


def _check_rows(rows: str) -> None:
    if rows not in ROWS:
        raise ValueError(f"rows must be one of {ROWS}, not {rows!r}")


def is_enabled(session: Session) -> bool:
    return getattr(session, "_pyfactories_fastpath", None) is not None


def enable(session: Session, rows: str = "named") -> bool:
    """Turn the fast path on for ``session``; True if it is on, False if it stays on the driver's path."""
    _check_rows(rows)
    if not AVAILABLE:
        warnings.warn(OFF, RuntimeWarning, stacklevel=2)
        return False
    if is_enabled(session):
        disable(session)
    if session.cluster.column_encryption_policy is not None:
        warnings.warn("pyfactories.fastpath stays off: the cluster uses a column encryption policy", RuntimeWarning, stacklevel=2)
        return False
    if session.client_protocol_handler is not protocol.ProtocolHandler:
        warnings.warn(
            f"pyfactories.fastpath stays off: the session uses its own protocol handler {session.client_protocol_handler!r}",
            RuntimeWarning,
            stacklevel=2,
        )
        return False
    saved = session.__dict__.get("client_protocol_handler", _MISSING)
    session.add_request_init_listener(_fastpath.use_built_rows)
    session.client_protocol_handler = _HANDLERS[rows]
    session._pyfactories_fastpath = (rows, saved)  # type: ignore[attr-defined]
    return True


def disable(session: Session) -> None:
    """Put ``session`` back on the driver's path (a no-op when the fast path is off)."""
    state = getattr(session, "_pyfactories_fastpath", None)
    if state is None:
        return
    _, saved = state
    if saved is _MISSING:
        session.__dict__.pop("client_protocol_handler", None)
    else:
        session.client_protocol_handler = saved
    try:
        session.remove_request_init_listener(_fastpath.use_built_rows)
    except ValueError:  # the application removed it already
        pass
    session._pyfactories_fastpath = None  # type: ignore[attr-defined]


def cache_info() -> dict[str, tuple[int, int]]:
    """``{rows: (hits, misses)}`` of the per-metadata decode plans."""
    decoders = {rows: h.message_types_by_opcode[protocol.ResultMessage.opcode].decoder for rows, h in _HANDLERS.items()}
    return {rows: (decoder.hits, decoder.misses) for rows, decoder in decoders.items()}


# Request timers that cost the same at any number of requests in flight (pyfactories.connection):
# ``Cluster(..., **fastpath.cluster_options())``.
from .connection import cluster_options  # noqa: E402
