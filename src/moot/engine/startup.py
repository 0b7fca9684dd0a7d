"""A `moot` process's start-up: with what the run needs only later left for the first wait
on the models.

`event_loop()` is the loop the engine runs a session on: once it has had nothing to do for a
few milliseconds (the first asks are then on the wire), it loads the modules `moot.lazy` handed
out and ends the garbage collector's start-up pause (moot/collector.py), so that neither the
imports nor the first collections delay the first request: they overlap the models' time. A
loop that never waits that long ends the pause `LATEST` seconds after it was made. Work given
to `when_idle()` (the readable copies of answers, engine/copies.py) waits the same way: a
phase's answers are checked and its next prompts sent first, and the copies are written while
the models think, on the loop itself, with no worker thread to take the interpreter's lock
from the loop while it is busy.
`end_workers()`, for a process that exits once its run has ended, lets that loop's worker
threads end while the outcome is shown rather than at the exit, which waits for them.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import selectors
import sys
import weakref
from collections.abc import Callable

from moot import collector, lazy

__all__ = ["end_workers", "event_loop", "when_idle"]


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
    selector = _LoadWhenIdle()
    loop = asyncio.SelectorEventLoop(selector)
    loop.call_later(LATEST, collector.collect_again)
    _MADE[loop] = selector.work
    return loop


# each loop `event_loop()` made, and its work for when it is idle
_MADE: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, collections.deque[Callable[[], None]]
] = weakref.WeakKeyDictionary()


def when_idle(work: Callable[[], None]) -> bool:
    """Have the running loop call `work` once it has been idle for `IDLE` seconds, in its own
    thread, if `event_loop()` made it; False if not (no running loop, or another's), and the
    caller does the work its own way. Work left when the loop closes is never done: a caller
    that must see it done keeps it, and does what is left itself (`FolderCopies`). `work`
    must not raise; should it, the loop's exception handler reports it and the rest is done."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    queue = _MADE.get(loop)
    if queue is None:
        return False
    queue.append(work)
    return True


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
    def __init__(self) -> None:
        super().__init__()
        self.work: collections.deque[Callable[[], None]] = collections.deque()

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        waiting = self.work or lazy.pending() or collector.is_paused()
        if waiting and (timeout is None or timeout > IDLE):
            ready = super().select(IDLE)
            if not ready:
                lazy.load()  # under the pause: what they build is frozen with the rest
                collector.collect_again()
                self._work()
            return ready  # the loop selects again, with its own timeout, when this is empty
        return super().select(timeout)

    def _work(self) -> None:
        while self.work:
            work = self.work.popleft()
            try:
                work()
            except Exception as exc:  # a bug in the work: reported, and the loop goes on
                asyncio.get_running_loop().call_exception_handler(
                    {"message": f"work for an idle moment failed: {work!r}", "exception": exc}
                )
