"""A `moot` process's start-up: without the cyclic garbage collector, and with what the run
needs only later left for the first wait on the models.

Before its first request, `moot run` imports some 450 modules and builds its config and
session: about 45,000 objects, nearly all of which live as long as the process. Their
allocation sets off the collector about 115 times, and each pass walks what start-up has built
so far, only to find it alive: some 15 ms of the 0.3 s before the first request
(benchmarks/process.py).

`paused()` (the `run` and `resume` commands, around all they do) turns the collector off;
`collect_again()`, called by the engine when its event loop starts, freezes what start-up built (so
that later passes skip it) and turns the collector back on. A caller that never paused it, a
library user of `moot.api` for one, is left as it was.

`event_loop()` is the loop the engine runs a session on: once it has had nothing to do for a
few milliseconds (the first asks are then on the wire), it loads the modules `moot.lazy` handed
out, so that their import overlaps the models' time instead of delaying the first request.
"""

from __future__ import annotations

import asyncio
import gc
import selectors
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from moot import lazy

__all__ = ["collect_again", "event_loop", "paused"]

_paused = False


@contextmanager
def paused() -> Iterator[None]:
    """The collector off until `collect_again()`, or at the latest until the block ends (a run that
    fails before its loop starts)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True
    try:
        yield
    finally:
        collect_again()


def collect_again() -> None:
    """End a pause: freeze what exists now and collect again. Does nothing without a pause."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


def event_loop() -> asyncio.AbstractEventLoop:
    """A new event loop that loads the modules `moot.lazy` handed out once it has been idle for
    `IDLE` seconds. Under an event loop policy of the caller's own (uvloop, say), that policy's
    loop: the modules then load on first use."""
    if sys.platform == "win32":  # the selector loop lacks subprocesses there
        return asyncio.new_event_loop()
    if type(asyncio.get_event_loop_policy()) is not asyncio.DefaultEventLoopPolicy:
        return asyncio.new_event_loop()
    return asyncio.SelectorEventLoop(_LoadWhenIdle())


# Idle this long, the loop is waiting on models, not on a connection being made or a request
# being written (on loopback those take microseconds): their time can carry the imports.
IDLE = 0.005


class _LoadWhenIdle(selectors.DefaultSelector):
    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if lazy.pending() and (timeout is None or timeout > IDLE):
            ready = super().select(IDLE)
            if not ready:
                lazy.load()
            return ready  # the loop selects again, with its own timeout, when this is empty
        return super().select(timeout)
