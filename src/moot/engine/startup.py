"""A `moot` process's start-up, without the cyclic garbage collector.

Before its first request, `moot run` imports some 450 modules and builds its config and
session: about 45,000 objects, nearly all of which live as long as the process. Their
allocation sets off the collector about 115 times, and each pass walks what start-up has built
so far, only to find it alive: some 15 ms of the 0.3 s before the first request
(benchmarks/process.py).

`paused()` (the `run` and `resume` commands, around all they do) turns the collector off;
`resume()`, called by the engine when its event loop starts, freezes what start-up built (so
that later passes skip it) and turns the collector back on. A caller that never paused it, a
library user of `moot.api` for one, is left as it was.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused", "resume"]

_paused = False


@contextmanager
def paused() -> Iterator[None]:
    """The collector off until `resume()`, or at the latest until the block ends (a run that
    fails before its loop starts)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True
    try:
        yield
    finally:
        resume()


def resume() -> None:
    """End a pause: freeze what exists now and collect again. Does nothing without a pause."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
