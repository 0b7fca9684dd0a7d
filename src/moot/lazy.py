"""Modules a run needs only once its models answer, imported while the models think.

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
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ["later", "load", "modules", "pending"]

_lock = threading.Lock()
_pending: list[str] = []
_work: list[Callable[[], object]] = []


class _StandIn(ModuleType):
    """Stands for the module of the same name until it is used."""

    def __getattr__(self, attr: str) -> Any:  # only for what the stand-in itself lacks
        return getattr(importlib.import_module(self.__name__), attr)


def modules(package: str, *names: str) -> tuple[ModuleType, ...]:
    """Stand-ins for the submodules `names` of `package`, each imported on first use (or by
    `load()`). A name that is no module is an error now, not on first use."""
    found = []
    for name in names:
        full = f"{package}.{name}"
        if importlib.util.find_spec(full) is None:
            raise ModuleNotFoundError(f"no module named {full!r}", name=full)
        with _lock:
            _pending.append(full)
        found.append(_StandIn(full))
    return tuple(found)


def later(*prepare: Callable[[], object]) -> None:
    """Have `load()` call each of `prepare` too: work that would otherwise be done on first use
    (and must still be, if `load()` never comes), such as a deferred pydantic model's
    `model_rebuild`."""
    with _lock:
        _work.extend(prepare)


def pending() -> bool:
    """Whether a module handed out may not be imported yet, or work is waiting."""
    return bool(_pending or _work)


def load() -> None:
    """Import every module handed out and not used yet, then do the work left for later."""
    with _lock:
        names, work = list(_pending), list(_work)
        _pending.clear()
        _work.clear()
    for name in names:
        importlib.import_module(name)
    for prepare in work:
        prepare()
