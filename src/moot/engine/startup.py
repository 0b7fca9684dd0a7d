"""A `moot` process's start-up: without the cyclic garbage collector, and with what the run
needs only later left for the first wait on the models.

Before its first request, `moot run` imports some 450 modules and builds its config and
session: about 45,000 objects, nearly all of which live as long as the process. Their
allocation sets off the collector about 115 times, and each pass walks what start-up has built
so far, only to find it alive: some 15 ms of the 0.3 s before the first request
(benchmarks/process.py).

`paused()` (the `run` and `resume` commands, around all they do) turns the collector off;
`resume()`, called by the engine when its event loop starts, freezes what start-up built (so
that later passes skip it) and turns the collector back on. A caller that never paused it, a
library user of `moot.api` for one, is left as it was.

`event_loop()` is the loop the engine runs a session on: the first time it waits with nothing
else to do (the first asks are then on the wire), it loads the modules `moot.lazy` handed out,
so that their import overlaps the models' time instead of delaying the first request.
"""

from __future__ import annotations

import asyncio
import gc
import selectors
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from moot import lazy

__all__ = ["event_loop", "paused", "resume"]

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


def event_loop() -> asyncio.AbstractEventLoop:
    """A new event loop that loads the modules `moot.lazy` handed out whenever it waits."""
    if sys.platform == "win32":  # the selector loop lacks subprocesses there
        return asyncio.new_event_loop()
    return asyncio.SelectorEventLoop(_LoadWhenWaiting())


class _LoadWhenWaiting(selectors.DefaultSelector):
    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None or timeout > 0:  # nothing ready to run: the loop is about to wait
            lazy.load()
        return super().select(timeout)
