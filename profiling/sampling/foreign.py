"""Classifying py-spy stacks of a process the harness did not start (``attach``), where
no region markers exist.

Everything :func:`profiling.sampling.categories.classify` does by module and function stays (its
``by_module`` mode). What it cannot see is the row factory: the driver's modules are
compiled, so between the reactor's Python frames (``cassandra/io/...``) and whatever the
driver calls back there are no Python frames at all. A row factory written in Python
therefore shows as a Python frame whose nearest Python caller is the driver's. The rule:

* a Python frame outside the driver, called from the driver (its nearest Python caller is
  a file of the ``cassandra`` package), is a row factory if its function is one the
  registry knows (:mod:`profiling.factories`: the driver's and pyfactories'), one named on
  the command line (``--row-factory``), or its name ends in ``factory`` (the driver's
  convention, which the registry's names all follow); everything it calls is the row
  factory's too;
* ``collections.namedtuple`` called from the driver is the driver's compiled
  ``named_tuple_factory`` building its class (almost all of that factory's cost).

The same gap hides the callbacks the driver runs as a request finishes (``add_callbacks``): between
the reactor's read handler and the program's callback there is no frame, so the callback, and what
it calls, would count as the reactor's (socket). The rule: a Python frame of the program (not the
driver's, not pyfactories', not the standard library's) whose nearest Python caller is the driver's or
pyfactories' is a callback the driver runs, *dispatch* (as the markers count it), unless a frame
inside it has a category of its own (a request it sends, a row factory). An asyncio application's
hand-written bridge (``add_callbacks`` handing the rows to ``loop.call_soon_threadsafe``) is such a
callback, with the wake-up of its loop.

Limits: the driver's compiled ``tuple_factory``, ``dict_factory`` and
``ordered_dict_factory`` and pyfactories' compiled factories leave no Python frame, so
their (small) cost stays in the event loop's category; a callback of the user's (added
with ``add_callback``) named ``...factory`` would be taken for a row factory; a user
factory named otherwise is found only with ``--row-factory``.
"""

from __future__ import annotations

import collections
import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from ..factories import FACTORIES, resolve
from . import categories
from .bymodule import by_module
from .categories import Samples
from .stacks import Frame, Stack, parse_frame

#: Function names of every registered row factory (the driver's and pyfactories').
KNOWN_FACTORIES = frozenset(f.attr for f in FACTORIES)
_NAMEDTUPLE = ("collections/__init__.py", "namedtuple")


def _in_driver(frame: Frame) -> bool:
    path = frame.file.replace("\\", "/")
    return frame.python and "/cassandra/" in path


def _in_standard_library(path: str) -> bool:
    """``/usr/lib/python3.11/asyncio/events.py`` and the like (not a ``site-packages`` below them)."""
    return bool(_STDLIB.search(path)) and "-packages/" not in path or path.startswith("<frozen ")


_STDLIB = re.compile(r"/(lib|Lib)/(python3\.\d+|pypy3\.\d+)/")


def _runs_callbacks(frame: Frame) -> bool:
    """The driver's, or pyfactories' connection's and futures' (which finish requests as the driver does)."""
    path = frame.file.replace("\\", "/")
    return _in_driver(frame) or "/pyfactories/connection/" in path or "/pyfactories/futures/" in path


def callback_position(frames: list[Frame]) -> int | None:
    """Index of the outermost frame of a callback of the program that the driver (or pyfactories'
    connection or futures) runs, or None."""
    caller: Frame | None = None
    for k, frame in enumerate(frames):
        if not frame.python:
            continue
        path = frame.file.replace("\\", "/")
        if (caller is not None and _runs_callbacks(caller) and not _in_driver(frame) and "/pyfactories/" not in path
                and not _in_standard_library(path)):
            return k
        caller = frame
    return None


@dataclass
class FactoryRule:
    """Which frames are row factories: names from the registry, the user's, and the suffix."""

    names: frozenset[str] = KNOWN_FACTORIES
    suffix: str = "factory"

    def matches(self, frame: Frame) -> bool:
        if not frame.python or _in_driver(frame):
            return False
        if frame.file.replace("\\", "/").endswith(_NAMEDTUPLE[0]) and frame.short == _NAMEDTUPLE[1]:
            return True
        return frame.short in self.names or frame.short.lower().endswith(self.suffix)

    def position(self, frames: list[Frame]) -> int | None:
        """Index of the outermost row-factory frame that the driver called, or None."""
        caller: Frame | None = None
        for k, frame in enumerate(frames):
            if not frame.python:
                continue
            if caller is not None and _in_driver(caller) and self.matches(frame):
                return k
            caller = frame
        return None

    def name(self, frame: Frame) -> str:
        if frame.short == _NAMEDTUPLE[1] and frame.file.endswith(_NAMEDTUPLE[0]):
            return "named_tuple_factory (the driver's, building a namedtuple class)"
        return f"{frame.short} ({_short_path(frame.file)})"


    def ref(self, frame: Frame) -> str | None:
        """The registry's name of the factory of this frame, when it is a registered one."""
        if frame.short == _NAMEDTUPLE[1] and frame.file.endswith(_NAMEDTUPLE[0]):
            return "named_tuple"
        path = frame.file.replace("\\", "/")
        for suffix, module in _REGISTERED_FILES.items():
            if path.endswith(suffix):
                try:
                    return resolve(f"{module}.{frame.short}").name
                except ValueError:
                    return None
        return None


#: Files of registered factories that run as Python code (the driver's when it is not compiled).
_REGISTERED_FILES = {"/cassandra/query.py": "cassandra.query", "/pyfactories/rows/_rows_py.py": "pyfactories.rows._rows_py"}


def _short_path(path: str) -> str:
    return "/".join(path.replace("\\", "/").split("/")[-3:])


def classify(stack: Stack, rule: FactoryRule) -> str | None:
    """Category of a sample of a foreign process, or None for an idle one."""
    frames = [parse_frame(f) for f in stack.frames]
    if categories.is_idle(frames):
        return None
    if rule.position(frames) is not None:
        return "row_factory"
    k = callback_position(frames)
    if k is not None and not any(map(by_module, frames[k:])):
        return "dispatch"
    return categories.classify(stack, by_module=True)


@dataclass
class Classified:
    """The samples of a foreign recording, and the row factories seen (name -> samples)."""

    samples: Samples
    factories: collections.Counter[str] = field(default_factory=collections.Counter)
    refs: dict[str, str | None] = field(default_factory=dict)

    @property
    def factory(self) -> str | None:
        """The row factory with the most samples."""
        return self.factories.most_common(1)[0][0] if self.factories else None

    @property
    def factory_ref(self) -> str | None:
        return self.refs.get(self.factory) if self.factory else None


def classify_all(stacks: Iterable[Stack], rule: FactoryRule) -> Classified:
    stacks = list(stacks)
    out = Classified(Samples.of(stacks, lambda stack: classify(stack, rule)))
    for stack in stacks:
        frames = [parse_frame(f) for f in stack.frames]
        k = rule.position(frames)
        if k is not None and not categories.is_idle(frames):
            out.factories[rule.name(frames[k])] += stack.count
            out.refs[rule.name(frames[k])] = rule.ref(frames[k])
    return out


def cpu_stacks(stacks: list[Stack], rule: FactoryRule) -> Iterator[tuple[list[str], int, list[str]]]:
    """The busy samples for the flamegraphs (as :func:`profiling.sampling.categories.cpu_stacks`), the
    row factory's frames coloured as such."""
    for stack in stacks:
        category = classify(stack, rule)
        if category is None:
            continue
        frames = [parse_frame(f) for f in stack.frames]
        cats = categories.frame_categories(stack, by_module=True)
        k = rule.position(frames)
        if k is not None:
            cats = cats[:k] + ["row_factory"] * (len(cats) - k)
        elif category == "dispatch" and (k := callback_position(frames)) is not None:
            cats = cats[:k] + ["dispatch"] * (len(cats) - k)
        base = categories.base_category(stack.thread)
        yield [f"thread: {stack.thread or '?'}", *stack.frames], stack.count, [base, *cats]
