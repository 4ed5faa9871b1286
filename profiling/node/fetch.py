"""Finding java/mvn and downloading the Cassandra jars with Maven."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from . import config

INSTALL_HINT = "install them with e.g. `apt-get install openjdk-17-jre-headless maven`"
MARKER = ".fetched"


class NodeError(RuntimeError):
    """Anything that keeps the local Cassandra from being fetched, started or stopped."""


def find_java() -> str:
    """``$JAVA_HOME/bin/java`` or ``java`` on PATH, checked to be JDK 17 or newer."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        raise NodeError(f"no `java` found (JAVA_HOME or PATH); Cassandra 5.0 needs JDK 17: {INSTALL_HINT}")
    major = java_major(java)
    if major < 17:
        raise NodeError(f"{java} is Java {major}; this tool runs Cassandra 5.0 on JDK 17: {INSTALL_HINT}")
    return java


def java_major(java: str) -> int:
    out = subprocess.run([java, "-version"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        raise NodeError(f"cannot tell the version of {java}: {out.stderr.strip()[:200]}")
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major  # "1.8.0" style


def find_mvn() -> str:
    mvn = shutil.which("mvn")
    if not mvn:
        raise NodeError(f"no `mvn` on PATH; it downloads Cassandra from Maven Central: {INSTALL_HINT}")
    return mvn


def is_fetched() -> bool:
    marker = config.lib_dir() / MARKER
    return marker.is_file() and marker.read_text().split()[:1] == [config.CASSANDRA_VERSION]


def fetch(say: Callable[[str], None] = print) -> Path:
    """Download cassandra-all and its runtime dependencies into ``<cache>/lib`` once.

    Maven's local repository also lives in the cache (``<cache>/m2``), so
    nothing is written to ~/.m2.  Jars land in a temporary folder that is
    renamed into place and marked only after Maven succeeded, so an
    interrupted download is simply redone.
    """
    lib = config.lib_dir()
    if is_fetched():
        say(f"cassandra {config.CASSANDRA_VERSION} already fetched: {lib}")
        return lib
    find_java()  # mvn needs it too; fail early with the install hint
    mvn = find_mvn()
    cache = config.cache_dir()
    tmp = cache / "lib.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    say(f"fetching org.apache.cassandra:cassandra-all:{config.CASSANDRA_VERSION} "
        f"and its runtime dependencies from Maven Central into {lib} ...")
    started = time.monotonic()
    _run_mvn(mvn, cache, tmp)
    jars = sorted(tmp.glob("*.jar"))
    if not any(j.name.startswith("cassandra-all-") for j in jars):
        raise NodeError(f"maven finished but no cassandra-all jar is in {tmp}")
    shutil.rmtree(lib, ignore_errors=True)
    tmp.rename(lib)
    (lib / MARKER).write_text(f"{config.CASSANDRA_VERSION} {len(jars)} jars\n")
    size = sum(j.stat().st_size for j in lib.glob("*.jar")) / 2**20
    say(f"fetched {len(jars)} jars ({size:.0f} MB) in {time.monotonic() - started:.1f} s")
    return lib


def _run_mvn(mvn: str, cache: Path, out: Path) -> None:
    cmd = [
        mvn, "-B", "-q",
        "-f", str(config.POM),
        f"-Dmaven.repo.local={cache / 'm2'}",
        f"-Dcassandra.version={config.CASSANDRA_VERSION}",
        "dependency:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={out}",
    ]
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-30:])
        raise NodeError(f"maven failed (exit {proc.returncode}): {' '.join(cmd)}\n{tail}")
