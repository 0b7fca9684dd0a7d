"""A `moot` process's start-up: with what the run needs only later left for the first wait
on the models.

`event_loop()` is the loop the engine runs a session on: once it has had nothing to do for a
few milliseconds (the first asks are then on the wire), it loads the modules `moot.lazy` handed
out and ends the garbage collector's start-up pause (moot/collector.py), so that neither the
imports nor the first collections delay the first request: they overlap the models' time. A
loop that never waits that long ends the pause `LATEST` seconds after it was made.
`end_workers()`, for a process that exits once its run has ended, lets that loop's worker
threads end while the outcome is shown rather than at the exit, which waits for them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import selectors
import sys
import weakref

from moot import collector, lazy

__all__ = ["end_workers", "event_loop"]


def event_loop() -> asyncio.AbstractEventLoop:
    """A new event loop that, once it has been idle for `IDLE` seconds, loads the modules
    `moot.lazy` handed out and ends a paused collector's pause (at the latest `LATEST` seconds
    after it is made). Under an event loop policy of the caller's own (uvloop, say), that
    policy's loop, and the pause ends now: the modules then load on first use."""
    if sys.platform == "win32" or (  # the selector loop lacks subprocesses there
        type(asyncio.get_event_loop_policy()) is not asyncio.DefaultEventLoopPolicy
    ):
        collector.collect_again()
        return asyncio.new_event_loop()
    loop = asyncio.SelectorEventLoop(_LoadWhenIdle())
    loop.call_later(LATEST, collector.collect_again)
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
# A loop busy for this long from its start (a replay of a long journal, models that answer at
# once) collects again anyway: the pause is for start-up, not for a run.
LATEST = 1.0


class _LoadWhenIdle(selectors.DefaultSelector):
    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if (lazy.pending() or collector.is_paused()) and (timeout is None or timeout > IDLE):
            ready = super().select(IDLE)
            if not ready:
                lazy.load()  # under the pause: what they build is frozen with the rest
                collector.collect_again()
            return ready  # the loop selects again, with its own timeout, when this is empty
        return super().select(timeout)
