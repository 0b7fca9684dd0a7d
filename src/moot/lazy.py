"""Modules a run needs only once its models answer, imported while the models think.

A protocol's judging, trust and substance checks cost some 15 ms of imports, all before the
first request if imported at the top of the protocol: yet nothing of them runs until a reply
is in. `modules()` hands out such modules unloaded (importlib's LazyLoader): each runs its code
on its first attribute access, or at the latest when `load()` is called, which the engine does
once its event loop has had nothing to do for a few milliseconds: the first asks are then on
the wire, and the import overlaps the models' time instead of delaying the first request
(engine/startup.py, `event_loop`).

A module that uses them keeps its types checked by importing them as usual for the checker:

    if TYPE_CHECKING:
        from moot.deliberation import substance, trust
    else:
        substance, trust = lazy.modules("moot.deliberation", "substance", "trust")

The loop and the modules' users share one thread (LazyLoader is not safe across threads).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from types import ModuleType

__all__ = ["later", "load", "modules", "pending"]

_pending: list[ModuleType] = []
_work: list[Callable[[], object]] = []


def modules(package: str, *names: str) -> tuple[ModuleType, ...]:
    """The submodules `names` of `package`, each loaded on first use (or by `load()`); one
    already imported is returned as it is."""
    return tuple(_module(f"{package}.{name}") for name in names)


def _module(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"no module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    setattr(sys.modules[parent], child, module)  # as an import binds it in its package
    _pending.append(module)
    return module


def later(prepare: Callable[[], object]) -> None:
    """Have `load()` call `prepare` too: work that would otherwise be done on first use (and
    must still be, if `load()` never comes), such as building a deferred pydantic model."""
    _work.append(prepare)


def pending() -> bool:
    """Whether a module handed out has not run yet, or work is waiting."""
    return bool(_pending or _work)


def load() -> None:
    """Run the code of every module handed out and not used yet, then the work left for later."""
    while _pending:
        module = _pending.pop(0)
        getattr(module, "__name__", None)  # any attribute access runs the module's code
    while _work:
        _work.pop(0)()
