"""What can run on the installed driver: the one place that decides it, part by part.

Each ``*_off()`` gives None when its part can run here, or the reason it cannot, in words a user
reads (``pyfactories.status`` shows them, and ``pyfactories.enable``'s one warning is made of them).
The driver releases every part is tested on are ``pyfactories._driver.TESTED_RELEASES``.
"""

from __future__ import annotations

import importlib
from typing import Any

import cassandra

from . import _driver
from ._impl import COMPILED

#: Whether the driver's decoders take ``protocol_features`` (scylla-driver's do): its dispatch,
#: encoding and ``ResponseFuture`` differ from cassandra-driver's, and the compiled dispatch and encoder
#: (``pyfactories.connection``) and the leaner futures (``pyfactories.futures._scylla_py``) follow it
#: where they do.
PROTOCOL_FEATURES = _driver.takes_protocol_features()

#: What of the driver the connection classes use, by module: the read loop and segment codec they
#: replace, the frames and errors they build, the reactors' timer and write hooks.
CONNECTION_INTERNALS = {
    "cassandra.connection": ("Connection.process_io_buffer", "Connection.process_msg",
                             "Connection._enable_checksumming", "Connection.defunct", "_Frame",
                             "CrcMismatchException", "ProtocolError", "NONBLOCKING"),
    "cassandra.segment": ("SegmentCodec.compress", "SegmentCodec.decompress", "SegmentCodec.FLAG_OFFSET",
                          "Segment.MAX_PAYLOAD_LENGTH", "SegmentHeader", "CrcException", "CRC24_INIT",
                          "CRC24_POLY", "CRC32_INITIAL"),
    "cassandra.io.libevreactor": ("LibevConnection.push", "LibevConnection.handle_read",
                                  "LibevConnection.handle_write", "LibevConnection.create_timer",
                                  "LibevConnection.initialize_reactor", "LibevConnection.handle_fork",
                                  "LibevLoop.notify", "libev.Timer", "libev.Prepare", "libev.EV_ERROR",
                                  "_global_loop"),
    "cassandra.io.asyncioreactor": ("AsyncioConnection.push", "AsyncioConnection.handle_write",
                                    "AsyncioConnection.create_timer", "AsyncioConnection.initialize_reactor",
                                    "AsyncioConnection._loop", "AsyncioConnection._loop_thread"),
}
_MISSING = object()


def release_off() -> str | None:
    """Why the installed driver is not one pyfactories is tested on, or None."""
    dist, version = _driver.distribution(), cassandra.__version__
    if version in _driver.TESTED_RELEASES.get(dist, ()):
        return None
    tested = "; ".join(f"{d} {', '.join(v)}" for d, v in _driver.TESTED_RELEASES.items())
    return f"{dist} {version} is not a driver release it is tested on ({tested})"


def rows_off() -> str | None:
    """Why rows cannot be built while decoding (``pyfactories.decoding``) here, or None."""
    if not COMPILED:
        return "pyfactories runs its pure-Python implementation"
    why = release_off()
    if why is not None:
        return why
    from cassandra import protocol

    if not getattr(protocol, "HAVE_CYTHON", False):
        return "the installed Cassandra driver has no compiled extensions"
    from .rows import impl

    built = getattr(impl, "BUILT_AGAINST_PXD", None)
    if built is None or _driver.pxd_digest() != built:
        return (f"the compiled declarations of {_driver.distribution()} {cassandra.__version__} differ from those "
                f"of the driver it was built against ({getattr(impl, 'BUILT_AGAINST_DRIVER', '?')})")
    return None


def binds_off() -> str | None:
    """Why prepared statements cannot be bound by ``pyfactories.binding`` here, or None."""
    if not COMPILED:
        return "pyfactories runs its pure-Python implementation"
    return release_off()


def futures_off() -> str | None:
    """Why the leaner futures (``pyfactories.futures``) cannot run here, or None."""
    if not COMPILED:
        return "pyfactories runs its pure-Python implementation"
    return release_off()


def connection_off() -> str | None:
    """Why pyfactories' connection classes cannot run on this driver, or None (whether the reactor a
    cluster uses is one of theirs is ``pyfactories.connection``'s to say)."""
    why = release_off()
    if why is not None:
        return why
    missing = missing_internals()
    if missing:
        return f"{_driver.distribution()} {cassandra.__version__} lacks what its connection classes use: {', '.join(missing)}"
    return None


CLUSTER_ENCRYPTS = "the cluster uses a column encryption policy"


def cluster_off(cluster: Any) -> str | None:
    """Why no session-level part (rows, binds, futures) can run for ``cluster``'s sessions, or None."""
    return CLUSTER_ENCRYPTS if cluster.column_encryption_policy is not None else None


def session_off(session: Any) -> str | None:
    """Why no session-level part can run on ``session`` (the driver's path must keep it), or None."""
    from cassandra import protocol

    why = cluster_off(session.cluster)
    if why is None and session.client_protocol_handler is not protocol.ProtocolHandler:
        why = f"the session uses its own protocol handler {session.client_protocol_handler!r}"
    return why


def missing_internals(internals: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    """The dotted names of ``internals`` (default :data:`CONNECTION_INTERNALS`) the installed driver lacks;
    a reactor module that cannot be imported counts as present (the connection says why it is off)."""
    missing = []
    for module_name, names in (CONNECTION_INTERNALS if internals is None else internals).items():
        try:
            module = importlib.import_module(module_name)
        except Exception:  # a reactor without its extension
            continue
        for dotted in names:
            found: Any = module
            for part in dotted.split("."):
                found = getattr(found, part, _MISSING)
                if found is _MISSING:
                    missing.append(f"{module_name}.{dotted}")
                    break
    return missing
