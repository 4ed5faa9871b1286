"""The driver under pyfactories: whichever distribution installed the ``cassandra`` package.

Two distributions install the same ``cassandra`` package: ``cassandra-driver`` (Apache
Cassandra's Python driver) and ``scylla-driver`` (ScyllaDB's fork). pyfactories depends on
neither, so installing it never replaces the driver a service already has; the extras
``pyfactories[cassandra]`` and ``pyfactories[scylla]`` install one where none is. Checked once,
when ``pyfactories`` is imported: no driver is a clear ``ImportError``; both is a warning, since
whichever was installed last has overwritten the other's files.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any

DISTRIBUTIONS = ("cassandra-driver", "scylla-driver")
#: The driver releases pyfactories is tested on, by distribution (the one list: the install matrix,
#: ``make test-matrix``, runs the differential tests of every part on each); with any other, only the
#: row factories and typed rows are on (``pyfactories._support`` decides, part by part).
TESTED_RELEASES = {"cassandra-driver": ("3.30.0", "3.30.1"), "scylla-driver": ("3.29.11", "3.29.12")}
#: The driver's ``.pxd`` files the fast path is compiled against (``cimport``, directly or not).
FASTPATH_PXD = ("buffer.pxd", "deserializers.pxd")
INSTALL_HINT = "pip install 'pyfactories[cassandra]' (or 'pyfactories[scylla]' for ScyllaDB's driver)"


def installed() -> list[tuple[str, str]]:
    """``(distribution, version)`` of every driver distribution whose metadata is installed."""
    found = []
    for dist in DISTRIBUTIONS:
        try:
            found.append((dist, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            pass
    return found


def distribution() -> str:
    """The distribution whose ``cassandra`` package is in use: the one whose version it reports
    (both names when two claim it at that version; ``"unknown"`` when no metadata says)."""
    import cassandra

    claims = installed()
    same = [dist for dist, version in claims if version == cassandra.__version__]
    return " or ".join(same or [dist for dist, _ in claims]) or "unknown"


def pxd_digest(package: str | Path | None = None) -> str | None:
    """A digest of the declarations (comments and blank lines left out) of the driver's ``.pxd``
    files the fast path cimports, from the installed ``cassandra`` package or the folder
    ``package``; None if one is missing. Equal digests: the compiled fast path fits the driver."""
    if package is None:
        spec = importlib.util.find_spec("cassandra")
        if spec is None or not spec.submodule_search_locations:
            return None
        package = list(spec.submodule_search_locations)[0]
    digest = hashlib.sha256()
    for name in FASTPATH_PXD:
        path = Path(package) / name
        if not path.is_file():
            return None
        lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
        digest.update("\n".join(ln for ln in lines if ln and not ln.startswith("#")).encode())
    return digest.hexdigest()[:16]


def takes_protocol_features(decode: Any = None) -> bool:
    """Whether ``decode`` (a handler's ``decode_message``; default the driver's ``ProtocolHandler``'s)
    takes ``protocol_features`` after ``protocol_version``, as scylla-driver's does."""
    if decode is None:
        from cassandra.protocol import ProtocolHandler

        decode = ProtocolHandler.decode_message
    return "protocol_features" in inspect.signature(decode).parameters


def feature_args(decode: Any = None) -> tuple[Any, ...]:
    """What goes between ``protocol_version`` and ``user_type_map`` when calling ``decode`` the way the
    driver does: default protocol features for scylla-driver, nothing for cassandra-driver."""
    if not takes_protocol_features(decode):
        return ()
    from cassandra.protocol_features import ProtocolFeatures  # scylla-driver only

    return (ProtocolFeatures(),)


def decode_message(handler: Any, protocol_version: int, user_type_map: Any, stream_id: int, flags: int, opcode: int,
                   body: bytes, decompressor: Any, result_metadata: Any) -> Any:
    """``handler.decode_message`` of a frame read off the wire, called as the installed driver calls it."""
    return handler.decode_message(protocol_version, *feature_args(handler.decode_message), user_type_map, stream_id,
                                  flags, opcode, body, decompressor, result_metadata)


def check() -> None:
    """Raise if no driver provides ``cassandra``; warn once if two distributions claim it."""
    if importlib.util.find_spec("cassandra") is None:
        raise ImportError(f"pyfactories needs the Cassandra driver, and no `cassandra` package is installed: "
                          f"{INSTALL_HINT}")
    claims = installed()
    if len(claims) > 1:
        import cassandra

        names = " and ".join(f"{dist} {version}" for dist, version in claims)
        warnings.warn(f"{names} are both installed, and both write the `cassandra` package: the files of the one "
                      f"installed last are in use (cassandra {cassandra.__version__}). Uninstall both and "
                      "reinstall the one you mean.", RuntimeWarning, stacklevel=2)
