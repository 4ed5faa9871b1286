"""The end-to-end depth's reference configuration, in which its targets are judged.

On a small machine where the client's threads and the Cassandra JVM share the CPUs, a large part of
a synchronous query's client CPU is waking threads across CPUs, and it moves with whatever else
runs. The targets were set with client and server pinned apart (``--client-cpus 1 --server-cpus 0``
on two CPUs) over at least :data:`MIN_ROUNDS` interleaved rounds, so only a run made that way says
PASS or MISS; any other run's verdicts are indicative (``~PASS``, ``~MISS``) and say why.
``make bench`` measures the reference configuration, with an unpinned pass beside it that is shown
and not judged; ``make bench-quick`` is unpinned and short, so indicative.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from ..harness.pinning import pin, unpin
from ..reporting.tables import fmt_ratio, markdown_table

MIN_ROUNDS = 21
INDICATIVE = "~"


def cpus() -> tuple[list[int], list[int]] | None:
    """(client CPUs, server CPUs) of the reference configuration on this machine: the client on the
    last usable CPU, the server on the first (1 and 0 on two CPUs); None with fewer than two."""
    usable = sorted(os.sched_getaffinity(0))
    if len(usable) < 2:
        return None
    return [usable[-1]], [usable[0]]


def problem(config: dict[str, Any]) -> str | None:
    """Why a run's configuration is not the reference one, or None when it is."""
    reasons = []
    client, server = config.get("client_cpus") or [], config.get("server_cpus") or []
    if not client or not server:
        missing = " and ".join(who for who, c in (("client", client), ("server", server)) if not c)
        reasons.append(f"{missing} not pinned" + (f" ({config['not_pinned']})" if config.get("not_pinned") else ""))
    elif set(client) & set(server):
        reasons.append("client and server share CPU(s)")
    if config.get("rounds", 0) < MIN_ROUNDS:
        reasons.append(f"{config.get('rounds', 0)} rounds")
    return "; ".join(reasons) or None


@contextmanager
def pinned_apart(spec: dict[str, Any], contact: Any, say: Callable[[str], None] = print) -> Iterator[dict[str, Any]]:
    """This process on ``spec["client_cpus"]`` and the node on ``spec["server_cpus"]`` for the block (every
    thread given its CPUs back after); yields ``spec`` as pinned.

    The node is the one whose PIDs ``spec["server_pids"]`` names, else the local node (which needs a
    ``contact`` that is local). With ``reference`` a node it cannot pin is left unpinned and the
    yielded spec says why (``not_pinned``: its verdicts are then indicative); without, that is an error."""
    from profiling.node import server_pids

    spec = dict(spec)
    servers = list(spec.get("server_pids") or (server_pids() if contact.local else []))
    if spec.get("server_cpus") and not servers:
        why = f"the cluster at {contact} is not one this machine runs (name its PID: --server-pid)"
        if not spec.get("reference"):
            raise ValueError(f"server_cpus pins the local node; {why}")
        say(f"end to end: cannot pin the server: {why}; its verdicts will be indicative")
        spec.pop("server_cpus")
        spec["not_pinned"] = why
    pinned: dict[int, set[int]] = {}
    try:
        pinned.update(pin([os.getpid()], spec.get("client_cpus")))
        pinned.update(pin(servers if spec.get("server_cpus") else [], spec.get("server_cpus")))
        yield spec
    finally:
        unpin(pinned, pids=[os.getpid(), *servers])


def judged(status: str, config: dict[str, Any]) -> tuple[str, str]:
    """A PASS/MISS status as measured in ``config``: itself in the reference configuration, else marked
    indicative; with the note saying why."""
    why = problem(config)
    if why is None or status not in ("PASS", "MISS"):
        return status, ""
    return INDICATIVE + status, f"indicative: {why}"


def with_range(ratio: float | None, spread: list[float] | None) -> str:
    """A median ratio with the range of its per-round ratios: ``0.81x (0.65–0.88)``."""
    if ratio is None:
        return "-"
    return fmt_ratio(ratio) + (f" ({spread[0]:.2f}–{spread[1]:.2f})" if spread else "")


def pinning_words(config: dict[str, Any]) -> str:
    """``; client pinned to CPU 1; server pinned to CPU 0`` (or why not)."""
    out = "".join(f"; {who} pinned to CPU {','.join(map(str, config[f'{who}_cpus']))}"
                  for who in ("client", "server") if config.get(f"{who}_cpus"))
    if config.get("not_pinned"):
        out += f"; server not pinned: {config['not_pinned']}"
    return out or "; unpinned"


def unpinned_lines(side: dict[str, Any]) -> list[str]:
    """The unpinned pass's tables (shown beside the reference figures, not judged)."""
    cases = side.get("cases") or []
    if not cases:
        return []
    from .configs import table_rows

    header = ["configuration", "connection"] + [f"{c['id']} ({c['rows']}x{c['cols']})" for c in cases]
    ratios = table_rows(side, lambda r: with_range(r["cpu_ratio"], r.get("cpu_ratio_range")))
    figures = table_rows(side, lambda r: f"{r['cpu_us_per_query']:.0f} µs, {r['qps']:.0f}/s")
    return [
        f"#### Unpinned, beside it (not judged; {side['config']['rounds']} interleaved rounds, client and "
        "server sharing the CPUs as they like)",
        "",
        "Client CPU per query relative to `tuple_factory` (median of per-round ratios, their range):",
        "",
        markdown_table(header, ratios),
        "",
        markdown_table(header, figures),
        "",
    ]
