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
`end_workers()`, for a process that exits once its run has ended, lets that loop's worker
threads end while the outcome is shown rather than at the exit, which waits for them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import selectors
import sys
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

from moot import lazy

__all__ = ["collect_again", "end_workers", "event_loop", "paused"]

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
    loop = asyncio.SelectorEventLoop(_LoadWhenIdle())
    _MADE.add(loop)
    return loop


_MADE: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def end_workers() -> None:
    """Shut the running loop's worker threads down without waiting (those of
    `asyncio.to_thread`: a journal's fsync), when `event_loop()` made that loop: work given to
    them is still done, and an idle one ends at once. For a process that exits once its run
    has ended (issue 23): its exit waits for such a thread, which the loop's own close only
    tells to end after the outcome is shown and the reports' writer started; told here, it
    has ended by then. A later `to_thread` on that loop fails, so nothing else may call this;
    elsewhere (a loop of the caller's, one of another policy) it does nothing."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    # The loop's default executor, made on its first `to_thread` (CPython's attribute, which
    # the loop's close shuts down the same way; another implementation is left as it is).
    workers = getattr(loop, "_default_executor", None) if loop in _MADE else None
    if isinstance(workers, concurrent.futures.Executor):
        workers.shutdown(wait=False)


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
