"""What to change, and what it would save: advice computed from a run's measured shares.

Every expected saving is a measured share times a measured cost ratio, never a constant:

* **row factory** → the compiled factory of the same row kind (``cached_named_tuple_factory``
  for named rows and for factories the registry does not know, pyfactories' ``dict_factory``
  and ``ordered_dict_factory`` for dicts). Saving = the row factory's share x (1 - cost of the
  replacement / cost of the factory in use). The cost ratio is measured in the profiled
  process itself on the column shape it saw (``record``: ``factory_costs``), or, for a factory
  the registry knows, here on the run's shape (``--rows-per-query`` x columns; attach: the
  shape of the harness's default workload, stated); for a factory of the user's seen only
  from outside (``attach``) it is unknown and the saving is an upper bound (the whole share).
* **deserialization** → ``pyfactories.enable(cluster)`` (and, for a factory the fast
  path leaves on the driver's path, one of ours it builds while decoding). Saving = deserialization's
  share x (1 - fast-path decode / the driver's decode), the ratio read from the project's
  recorded decode benchmark (``benchmarks/results/results.json``, ``decode`` depth), on the
  fixture nearest the shape; without that file the saving is not given.
  Not for a run whose requests returned no rows (writes): the fast path decodes rows only.
* **timers** → no client-side timeout per request (``timeout=None``, or an execution profile's
  ``request_timeout=None``) where the application does not need one, or fewer requests in
  flight: a request without a timeout creates no timer. Given when the run's requests carry a
  timeout (the harness's ``request_timeout``; ``record`` counts them) or when that is not known
  (``attach``; the driver's default is 10 s). Saving: up to the timers' share (the whole of
  it, an upper bound: the reactor's own timer service stays).
* **not CPU-bound**: when the client's CPU over the wall time is under half a core it is
  mostly waiting; cutting its CPU then shortens little, and the report says so first.

No rule for framing: what its share would become (protocol v4 without v5's checksums, say)
is not measured anywhere the advice could read it, and advice here gives measured figures only.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from typing import Any, Callable

from .. import factories
from ..harness.workload import Workload
from ..timing.factorycost import costs

#: Shares below this are not worth a change.
MIN_SHARE = 0.05
#: Cores of CPU per second of wall time under which the client is "mostly waiting".
WAITING_CORES = 0.5
#: The column shape used when the run's is unknown: the harness's default workload.
DEFAULT_SHAPE = (10, 5)
RESULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "benchmarks", "results", "results.json")
_REPLACEMENT = {"named": "cached_named_tuple", "dict": "pf_dict", "ordered": "pf_ordered_dict",
                "class": "class_row", "custom": "cached_named_tuple"}


@dataclass
class Advice:
    category: str
    share: float                 # the measured share it acts on (0..1)
    change: str                  # what to do
    expected_pts: float | None   # expected drop of client CPU, in points of the current total
    basis: str                   # where the expected figure comes from
    upper_bound: bool = False
    subject: str = ""            # what is in use now, e.g. the row factory's name

    @property
    def text(self) -> str:
        if self.category == "waiting":
            return self.change
        if self.expected_pts is None:
            gain = "saving not measured"
        else:
            gain = f"expected {'up to ' if self.upper_bound else '~'}-{self.expected_pts:.0f} points"
        subject = f" {self.subject}" if self.subject else ""
        return (f"{self.category.replace('_', ' ')}{subject}: {self.share * 100:.0f}% of client CPU → "
                f"{self.change} ({gain}; {self.basis})")


def measured_shares(row: dict[str, Any]) -> dict[str, float] | None:
    """The instrumented shares when there are some (exact clocks), else the sampled ones."""
    shares = row.get("shares") or {}
    return shares.get("instrumented") or shares.get("sampled")


def for_row(row: dict[str, Any], results_path: str = RESULTS) -> list[Advice]:
    """The advice for one result row (``summary.json``), most valuable first."""
    if row.get("failed"):
        return []
    out: list[Advice] = []
    wall, cpu = row.get("wall_s") or 0.0, row.get("client_cpu_s") or 0.0
    if wall > 0 and cpu / wall < WAITING_CORES:
        out.append(Advice("waiting", cpu / wall,
                          f"not CPU-bound: the client used {cpu / wall:.2f} of a core over {wall:.1f} s; it is "
                          "mostly waiting (on the server, the network or its own work), so the changes below "
                          "cut CPU, not latency", None, "process CPU / wall time"))
    shares = measured_shares(row)
    if not shares:
        return out
    current = _registered(row.get("factory_ref") or row.get("factory"))
    shape = tuple(row.get("shape") or _shape_of(row))
    rows_share = shares.get("row_factory", 0.0)
    if rows_share >= MIN_SHARE and (current is None or current.family not in factories.OURS):
        out.append(_row_factory_advice(row, current, rows_share, shape, row.get("column_type") or "text"))
    deser = shares.get("deserialization", 0.0)
    if (deser >= MIN_SHARE and row.get("rows") != 0 and (current is None or current.family != "fastpath")
            and _fastpath_usable()):
        out.append(_fastpath_advice(current, deser, shape, results_path))
    timers = shares.get("timers", 0.0)
    carried = requests_carry_timeout(row)
    if timers >= MIN_SHARE and carried is not False:
        out.append(_timers_advice(timers, carried))
    return sorted(out, key=lambda a: (a.category != "waiting", -(a.expected_pts or 0)))


def annotate(rows: list[dict[str, Any]], results_path: str = RESULTS) -> None:
    """Add ``advice`` (dicts with their text) to every row, in place."""
    for row in rows:
        row["advice"] = [{**asdict(a), "text": a.text} for a in for_row(row, results_path)]


def lines(rows: list[dict[str, Any]]) -> list[str]:
    """The advice of every row, one line each, prefixed by the row's name when there are several."""
    out = []
    for row in rows:
        name = f"{row.get('workload', '')} {row.get('pattern', '')} {row.get('factory', '')}".strip()
        for a in row.get("advice", []):
            out.append(f"{name}: {a['text']}" if len(rows) > 1 else a["text"])
    return out


def _registered(name: str | None) -> factories.Factory | None:
    if not name:
        return None
    try:
        found = factories.resolve(name) if ":" not in name else factories.BY_NAME.get(name)
    except ValueError:
        return None
    return found if found and found.family != "custom" else None


def _shape_of(row: dict[str, Any]) -> tuple[int, int]:
    """(rows per result, columns) of a harness run, else the default."""
    ops, rows = row.get("ops") or 0, row.get("rows") or 0
    if ops and rows:
        return max(1, round(rows / ops)), int(row.get("num_columns") or DEFAULT_SHAPE[1])
    return DEFAULT_SHAPE


def requests_carry_timeout(row: dict[str, Any]) -> bool | None:
    """Do the run's requests carry a client-side timeout? None when not known (``attach``)."""
    if "request_timeout" in row:  # the harness's runs
        return row["request_timeout"] is not None
    counted = row.get("requests")  # record: counted as they were sent
    if counted and counted.get("sent"):
        return counted.get("with_timeout", 0) > 0
    return None


def _timers_advice(share: float, carried: bool | None) -> Advice:
    change = ("`timeout=None` on each `session.execute`/`execute_async`, or `request_timeout=None` on the "
              "execution profile, where the application does not need a client-side timeout; or fewer "
              "requests in flight")
    known = ("the requests carry a timeout, each a timer" if carried else
             "whether the requests carry a timeout is not known from outside; the driver's default is 10 s")
    return Advice("timers", share, change, share * 100,
                  f"{known}; a request without one creates no timer, but the reactor still services its heap",
                  upper_bound=True)


def _row_factory_advice(row: dict[str, Any], current: factories.Factory | None, share: float,
                        shape: tuple[int, ...], column_type: str = "text") -> Advice:
    kind = current.rows if current else "custom"
    if current and current.family == "python" and current.counterpart:
        target = next(f for f in factories.FACTORIES if f.twin == current.name)
    else:
        target = factories.BY_NAME[_REPLACEMENT.get(kind, "cached_named_tuple")]
    in_use = f"`{current.attr}`" if current else f"`{row.get('factory') or 'your row factory'}`"
    change = f"`session.row_factory = {_qualified(target)}`"
    costs = row.get("factory_costs") or {}
    measured = (costs.get("replacement_ns") or {}).get(target.attr)
    if measured and costs.get("current_ns"):
        ratio = measured / costs["current_ns"]
        basis = (f"{target.attr} costs {ratio:.2f}x the factory in use, measured in the profiled process on "
                 f"its rows ({costs['rows']} rows x {costs['columns']} columns)")
        return Advice("row_factory", share, change, share * max(0.0, 1 - ratio) * 100, basis, subject=in_use)
    if current is not None:
        ratio = measure_ratio(current.row_factory, target.row_factory, shape, column_type)
        basis = (f"{target.attr} costs {ratio:.2f}x {current.attr}, measured here on {shape[0]} rows x {shape[1]} "
                 f"{column_type} columns")
        return Advice("row_factory", share, change, share * max(0.0, 1 - ratio) * 100, basis, subject=in_use)
    return Advice("row_factory", share, change, share * 100,
                  "the replacement's cost on your rows is unknown from outside: `record` measures it",
                  upper_bound=True, subject=in_use)


def _qualified(f: factories.Factory) -> str:
    return f"{f.module}.{f.attr}"


def measure_ratio(current: Callable[..., Any], replacement: Callable[..., Any], shape: tuple[int, ...],
                  column_type: str = "text") -> float:
    """CPU of ``replacement`` / ``current`` here, on ``shape`` (rows, columns) of ``column_type``
    values (the harness's workload's, ``mixed`` included)."""
    n_rows, n_cols = int(shape[0]), int(shape[1])
    workload = Workload(num_columns=n_cols, column_type=column_type, rows_per_query=n_rows)
    colnames = [f"column_{i}" for i in range(n_cols)]
    rows = [list(workload.row(r)) for r in range(n_rows)]
    ns = costs({"current": current, "replacement": replacement}, colnames, rows)
    return ns["replacement"] / ns["current"] if ns["current"] > 0 else 1.0


def _routed_by_the_fastpath(current: factories.Factory | None) -> bool:
    """Whether requests of the factory in use would take the fast path once it is enabled."""
    if current is None:
        return False
    from cassandra.protocol import ProtocolHandler

    from pyfactories import decoding

    return decoding.route(current.row_factory)[0] is not ProtocolHandler


def _fastpath_usable() -> bool:
    return bool(factories.fastpath_status()[0])


def _fastpath_advice(current: factories.Factory | None, share: float, shape: tuple[int, ...],
                     results_path: str) -> Advice:
    rows = "dict" if current and current.rows in ("dict", "ordered") else "named"
    change = f"`pyfactories.enable(cluster, rows={rows!r})` before `cluster.connect()`"
    if not _routed_by_the_fastpath(current):
        # the fast path leaves a factory it does not know on the driver's path: name one it knows
        target = factories.BY_NAME["pf_dict" if rows == "dict" else "cached_named_tuple"]
        change = f"`session.row_factory = {_qualified(target)}`, then {change}"
    ratio, case = _decode_ratio(f"fastpath_{rows}", shape, results_path)
    if ratio is None:
        return Advice("deserialization", share, change, None,
                      f"no recorded decode benchmark at {results_path} (make bench-quick writes one)")
    basis = (f"fast-path decode costs {ratio:.2f}x the driver's in the recorded decode benchmark "
             f"({case}); the row factory's share goes too, as rows are built while decoding")
    return Advice("deserialization", share, change, share * max(0.0, 1 - ratio) * 100, basis)


def _decode_ratio(fast: str, shape: tuple[int, ...], path: str) -> tuple[float | None, str]:
    """ns of ``fast`` / ns of the driver's decode with ``tuple_factory`` on the recorded fixture
    nearest ``shape``."""
    try:
        with open(path) as f:
            cases = json.load(f)["decode"]["cases"]
    except (OSError, ValueError, KeyError, TypeError):
        return None, ""
    usable = [c for c in cases if fast in c.get("results", {}) and factories.REFERENCE in c["results"]]
    if not usable:
        return None, ""
    rows, cols = shape[0], shape[1]
    case = min(usable, key=lambda c: abs(math.log(c["rows"] / max(rows, 1))) + abs(math.log(c["cols"] / max(cols, 1))))
    res = case["results"]
    return res[fast]["ns_per_row"] / res[factories.REFERENCE]["ns_per_row"], f"fixture {case['id']}"

