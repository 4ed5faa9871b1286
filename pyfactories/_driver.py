"""The driver under pyfactories: whichever distribution installed the ``cassandra`` package.

Two distributions install the same ``cassandra`` package: ``cassandra-driver`` (Apache
Cassandra's Python driver) and ``scylla-driver`` (ScyllaDB's fork). pyfactories depends on
neither, so installing it never replaces the driver a service already has; the extras
``pyfactories[cassandra]`` and ``pyfactories[scylla]`` install one where none is. Checked once,
when ``pyfactories`` is imported: no driver is a clear ``ImportError``; both is a warning, since
whichever was installed last has overwritten the other's files.
"""

from __future__ import annotations

import importlib.util
import warnings
from importlib import metadata

DISTRIBUTIONS = ("cassandra-driver", "scylla-driver")
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
