"""Rows built while decoding, for the requests whose row factory allows it.

    import pyfactories
    pyfactories.enable(session)                # every part; rows="dict" for dicts by default
    pyfactories.decoding.enable(session)       # this part alone (rows="named" or "dict")
    pyfactories.decoding.disable(session)      # back to the driver's path

``enable`` adds a request-init listener (``Session.add_request_init_listener``)
to that session: every request the session starts
(``execute``, ``execute_async``, ``execute_concurrent``, and their later pages)
is routed by the row factory its execution profile (or the legacy
``session.row_factory``) names (``route``):

* the driver's ``named_tuple_factory`` (the driver's default): rows of the kind
  given to ``enable``, built while decoding;
* ``pyfactories.cached_named_tuple_factory``: named rows built while decoding;
* the driver's and our ``dict_factory``: dicts built while decoding;
* ``tuple_factory``: plain tuples, decoded the fast way;
* our ``ordered_dict_factory``, and any object whose ``__pyfactories_factory__``
  is true: plain tuples decoded the fast way, then the factory itself, called by
  the driver as usual (its errors are that request's error);
* anything else (an application's own function, the driver's
  ``ordered_dict_factory``, DSE graph factories): the driver's own path, untouched.

A routed request's future gets one of this module's protocol handlers (a
subclass of the driver's ``ProtocolHandler`` whose RESULT message decodes rows
with ``pyfactories.decoding._fastpath``: metadata cached per column list or prepared
statement, values decoded by the driver's own deserializers, each row built
once). When its rows are built already, its row factory becomes
``tuple_factory``, one of the driver's, so ``ResultSet.was_applied`` keeps
working. A request whose future was given another handler than the driver's
(a session's own ``client_protocol_handler``) is left alone, and so are the
driver's internal queries (query traces, schema).

The rows equal those the request's own factory makes on the driver's path
(field names included). Results that use a column encryption policy or DSE
continuous paging are decoded by the driver's own path and then given to
``cached_named_tuple_factory`` / ``dict_factory`` / ``tuple_factory``.

The compiled module depends on the driver's binary internals: it records a
digest of the driver's ``.pxd`` declarations it was built against, and runs on
the driver releases pyfactories is tested on (``pyfactories._driver.TESTED_RELEASES``)
whose declarations are the same (``pyfactories._support.rows_off`` decides). With any
other driver, or one without its compiled extensions, this part is off
(:data:`UNAVAILABLE_REASON` says why; ``pyfactories.status`` shows it) and sessions keep the
driver's normal path. Its specification is the driver's own Python code: there is no pure-Python twin.
"""

from __future__ import annotations

import warnings

from cassandra import protocol
from cassandra.cluster import Session

from .. import _driver, _support

ROWS = ("named", "dict")

UNAVAILABLE_REASON = _support.rows_off()
if UNAVAILABLE_REASON is None:
    try:
        from . import _fastpath, _routes
    except ImportError as exc:
        UNAVAILABLE_REASON = f"pyfactories.decoding._fastpath could not be imported: {exc}"
AVAILABLE = UNAVAILABLE_REASON is None
#: The warning of ``enable`` when this part is off.
OFF = (f"pyfactories.decoding is off: {UNAVAILABLE_REASON}; sessions keep the driver's normal path. Install a "
       "driver release it is tested on, or rebuild pyfactories against the installed one, to use it.")


KINDS = ("named", "dict", "tuple")


def _make_handler(rows: str) -> type:
    from cassandra.query import tuple_factory

    from ..rows import cached_named_tuple_factory, dict_factory

    kind = _KIND[rows]
    base_message = protocol.ProtocolHandler.message_types_by_opcode[protocol.ResultMessage.opcode]
    factory = {"named": cached_named_tuple_factory, "dict": dict_factory, "tuple": tuple_factory}[rows]
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


def _make_router() -> object:
    from cassandra import query

    from ..rows import _rows, _rows_py

    return _routes.Router(
        protocol.ProtocolHandler,
        [_HANDLERS[rows] for rows in KINDS],  # in the order of _routes.NAMED, DICT, TUPLE
        tuple_factory=query.tuple_factory,
        session_default=query.named_tuple_factory,
        named=(_rows.cached_named_tuple_factory, _rows_py.cached_named_tuple_factory),
        dicts=(query.dict_factory, _rows.dict_factory, _rows_py.dict_factory),
        kept=(_rows.ordered_dict_factory, _rows_py.ordered_dict_factory),
    )


if AVAILABLE:
    _KIND = {"named": _fastpath.ROWS_NAMED, "dict": _fastpath.ROWS_DICT, "tuple": _fastpath.ROWS_TUPLE}
    _HANDLERS: dict[str, type] = {rows: _make_handler(rows) for rows in KINDS}
    _ROUTER = _make_router()
    _ROUTE_KIND = {"named": _routes.NAMED, "dict": _routes.DICT}
    #: One request-init listener per kind of rows a session asks for (``enable``'s ``rows``).
    _LISTENERS = {rows: _routes.RequestRouter(_ROUTER, _ROUTE_KIND[rows]) for rows in ROWS}
else:
    _KIND, _HANDLERS, _ROUTER, _ROUTE_KIND, _LISTENERS = {}, {}, None, {}, {}


def handler(rows: str = "named") -> type:
    """The protocol handler class that builds ``rows`` rows ("named", "dict" or "tuple") while decoding
    (e.g. to ``decode_message`` a captured body)."""
    if rows not in KINDS:
        raise ValueError(f"rows must be one of {KINDS}, not {rows!r}")
    _check_available()
    return _HANDLERS[rows]


def route(row_factory: object, rows: str = "named") -> tuple[type, object]:
    """``(protocol handler class, row factory)`` a request whose future has ``row_factory`` gets on a
    session where ``enable(session, rows=rows)`` is on: see the module's docstring."""
    _check_rows(rows)
    _check_available()
    return _ROUTER.route(row_factory, _ROUTE_KIND[rows])


def _check_available() -> None:
    if not AVAILABLE:
        raise RuntimeError(f"pyfactories.decoding is off: {UNAVAILABLE_REASON}")


def _check_rows(rows: str) -> None:
    if rows not in ROWS:
        raise ValueError(f"rows must be one of {ROWS}, not {rows!r}")


def is_enabled(session: Session) -> bool:
    return getattr(session, "_pyfactories_fastpath", None) is not None


def why_not(session: Session) -> str | None:
    """Why rows cannot be built while decoding for ``session``, or None."""
    return UNAVAILABLE_REASON if not AVAILABLE else _support.session_off(session)


def turn_on(session: Session, rows: str = "named") -> str | None:
    """Rows built while decoding for ``session`` (see the module's docstring); None when on, else why not
    (and ``session`` is left on the driver's path). ``pyfactories.enable`` calls it; it warns nothing."""
    _check_rows(rows)
    why = why_not(session)
    if why is not None:
        return why
    if is_enabled(session):
        disable(session)
    listener = _LISTENERS[rows]
    session.add_request_init_listener(listener)
    session._pyfactories_fastpath = (rows, listener)  # type: ignore[attr-defined]
    return None


def enable(session: Session, rows: str = "named") -> bool:
    """This part alone for ``session``: True if it is on, False (with a ``RuntimeWarning`` saying why) if the
    session stays on the driver's path. ``rows``: what requests whose factory is the driver's
    ``named_tuple_factory`` (its default) get. ``pyfactories.enable`` turns every part on."""
    why = turn_on(session, rows)
    if why is not None:
        warnings.warn(OFF if not AVAILABLE else f"pyfactories.decoding stays off: {why}", RuntimeWarning, stacklevel=2)
        return False
    return True


def disable(session: Session) -> None:
    """Put ``session``'s requests back on the driver's decoding (a no-op when this part is off)."""
    state = getattr(session, "_pyfactories_fastpath", None)
    if state is None:
        return
    _, listener = state
    try:
        session.remove_request_init_listener(listener)
    except ValueError:  # the application removed it already
        pass
    session._pyfactories_fastpath = None  # type: ignore[attr-defined]


def cache_info() -> dict[str, tuple[int, int]]:
    """``{rows: (hits, misses)}`` of the per-metadata decode plans, for "named", "dict" and "tuple"."""
    decoders = {rows: h.message_types_by_opcode[protocol.ResultMessage.opcode].decoder for rows, h in _HANDLERS.items()}
    return {rows: (decoder.hits, decoder.misses) for rows, decoder in decoders.items()}
