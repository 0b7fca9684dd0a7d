"""Modules and regular expressions a run needs only once its models answer, made while the
models think.

A protocol's judging, trust and substance checks cost some 15 ms of imports, all before the
first request if imported at the top of the protocol: yet nothing of them runs until a reply
is in. `modules()` hands out stand-ins for such modules: the first attribute read through one
imports its module and is answered from it. `load()` imports every module handed out and not
used yet; the engine calls it once its event loop has had nothing to do for a few
milliseconds (engine/startup.py, `event_loop`): the first asks are then on the wire, and the
import overlaps the models' time instead of delaying the first request.

A module that uses them keeps its types checked by importing them as usual for the checker:

    if TYPE_CHECKING:
        from moot.deliberation import substance, trust
    else:
        substance, trust = lazy.modules("moot.deliberation", "substance", "trust")

Imports go through `importlib.import_module`, whose per-module lock makes a stand-in safe to
use from any thread (batch replays run in worker threads): a module is imported once, and a
thread that reads it while another imports it waits for the module whole. The stand-in itself
is never in `sys.modules`, so a plain import elsewhere gets the real module.

`pattern()` is `re.compile` put off to the pattern's first use. Compiling a regular expression
costs 0.1 to 1 ms; some thirty modules a run imports before its first request compile theirs at
import, and all but one are first used on a reply.
"""

from __future__ import annotations

import importlib
import re
import threading
from types import ModuleType
from typing import Any, cast

__all__ = ["load", "modules", "pattern", "pending"]

_lock = threading.Lock()
_pending: list[str] = []


class _StandIn(ModuleType):
    """Stands for the module of the same name until it is used."""

    def __getattr__(self, attr: str) -> Any:  # only for what the stand-in itself lacks
        # The module once imported, kept: a protocol reads its functions through the stand-in
        # on every step, and importlib's checks cost a resume some 640 of them. An attribute is
        # read from the module each time, so one patched or replaced there is seen.
        module = self.__dict__.get("_StandIn__module")
        if module is None:
            module = self.__dict__["_StandIn__module"] = importlib.import_module(self.__name__)
        return getattr(module, attr)


def modules(package: str, *names: str) -> tuple[ModuleType, ...]:
    """Stand-ins for the submodules `names` of `package`, each imported on first use (or by
    `load()`). A name that is no module fails on its first use, not here: looking each one up
    cost a millisecond of start-up in all (tests/test_lazy.py checks every name moot hands
    out)."""
    full = [f"{package}.{name}" for name in names]
    with _lock:
        _pending.extend(full)
    return tuple(_StandIn(name) for name in full)


def pending() -> bool:
    """Whether a module handed out may not be imported yet."""
    return bool(_pending)


def load() -> None:
    """Import every module handed out and not used yet. One that fails to import is left to
    fail where it is first used, with its caller's context, not in the loop that loads it."""
    with _lock:
        names = list(_pending)
        _pending.clear()
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            continue


class _Pattern:
    """Stands for `re.compile(source, flags)` until its first use: the first attribute read
    compiles it (two threads may both compile: the same pattern, harmlessly), and each
    attribute read is kept on the stand-in, so that later reads are plain attribute reads."""

    def __init__(self, source: str, flags: int) -> None:
        self._source, self._flags = source, flags
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:  # only for what the stand-in does not hold yet
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        value = getattr(self._compiled, name)
        setattr(self, name, value)
        return value


def pattern(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, compiled on first use. For a module-level pattern used
    through its methods and attributes (`.sub`, `.search`, `.pattern`), never handed to a
    function of `re` nor checked with isinstance."""
    return cast("re.Pattern[str]", _Pattern(source, flags))
