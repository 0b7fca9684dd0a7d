"""Deliberation protocols. Each is `async def run(session, task, options) -> Outcome`."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Coroutine
from typing import Any

from moot.engine.session import Session
from moot.types import Outcome

__all__ = ["PROTOCOLS", "ProtocolFn", "load_protocol"]

ProtocolFn = Callable[[Session, str, Any], Coroutine[Any, Any, Outcome]]

# name -> (module, options attribute of RunConfig)
PROTOCOLS: dict[str, tuple[str, str]] = {
    "arena": ("moot.protocols.arena", "arena"),
    "court": ("moot.protocols.court", "court"),
}


def load_protocol(name: str) -> ProtocolFn:
    module, _ = PROTOCOLS[name]
    run: ProtocolFn = importlib.import_module(module).run
    return run
