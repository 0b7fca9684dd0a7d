"""Start-up without the cyclic garbage collector.

Before its first request, `moot run` imports some 500 modules and builds its config and
session: about 80,000 objects, nearly all of which live as long as the process. Their
allocation sets off the collector about 90 times, and each pass walks what start-up has built
so far, only to find it alive: some 15 ms before the first request (benchmarks/process.py),
and 10 ms more in the 28 passes made while the session opened and the HTTP stack was
imported, when the pause used to end as the run's loop started (issue 23).

`pause()` turns the collector off: the `moot` command's entry point (`moot/__main__.py`) does it
before its first import. `collect_again()` ends the pause: it freezes what start-up built (so
that later passes skip it) and turns the collector back on. A run's event loop calls it once
it first waits on the models, the first asks out (engine/startup.py; at the latest a second
after it starts); a replay of a finished session calls it as it begins (engine/lifecycle.py);
the CLI calls it as soon as the command is known when that command starts no run
(cli/__init__.py). `paused()` is a pause for a block: the `run` and
`resume` commands' (cli/common.py, `quick_start`), which carries on the entry point's pause if
there is one, and ends it at the latest when the block ends (a run that fails before its loop
starts). A caller that turned the collector off itself, or a library user of `moot.api`, is
left as it was; one that calls the CLI in its own process (a test) gets the collector back on
at the same point, with nothing of its own frozen: only the entry point's pause freezes.

Imports nothing but the standard library: the entry point imports it before anything else.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collect_again", "is_paused", "pause", "paused"]

_paused = False
_freeze = False  # the pause began with the process: what exists at its end lives as long


def pause() -> None:
    """Turn the collector off until `collect_again()`, unless it is off already; for the
    `moot` command's entry point: the end of the pause freezes what start-up built."""
    _begin(freeze=True)


def _begin(*, freeze: bool) -> None:
    global _paused, _freeze
    if gc.isenabled():
        gc.disable()
        _paused, _freeze = True, freeze


@contextmanager
def paused() -> Iterator[None]:
    """The collector off until `collect_again()`, or at the latest until the block ends. A
    pause this block begins itself (the CLI called in a process of its caller's, a test's)
    freezes nothing when it ends: the caller's objects are not start-up's, to keep for good."""
    _begin(freeze=False)
    try:
        yield
    finally:
        collect_again()


def is_paused() -> bool:
    """Whether a pause began with `pause()` or `paused()` and has not ended."""
    return _paused


def collect_again() -> None:
    """End a pause: freeze what exists now, if the pause began with the process, and collect
    again. Does nothing without a pause."""
    global _paused
    if _paused:
        _paused = False
        if _freeze:
            gc.freeze()
        gc.enable()
