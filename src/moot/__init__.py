"""moot: several LLMs deliberate until they reach a consensus worth trusting, or show exactly
where they disagree.

    import moot
    result = moot.run("Is SHA-1 still safe for git object ids?")
    print(result.status, result.trust)
    print(result.final_answer)

Names are imported on first use so that `moot --help` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moot.version import __version__

__all__ = [
    "Outcome",
    "RunConfig",
    "Session",
    "__version__",
    "arun",
    "replay",
    "resume",
    "run",
    "start",
]

_LAZY = {
    "run": "moot.api",
    "arun": "moot.api",
    "start": "moot.api",
    "resume": "moot.api",
    "replay": "moot.api",
    "RunConfig": "moot.config",
    "Session": "moot.engine.session",
    "Outcome": "moot.types",
}

if TYPE_CHECKING:
    from moot.api import arun, replay, resume, run, start
    from moot.config import RunConfig
    from moot.engine.session import Session
    from moot.types import Outcome


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'moot' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
