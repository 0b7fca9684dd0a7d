"""Faces that show a session while it runs: the live terminal view, plain lines, JSON logs.

Each is a `Face`: a subscriber to the session's events (`Session.subscribe`, or the runner's
`subscribers=`) and a context manager the caller opens around the run. The runner's first
signal, `opened`, carries the session id, its begin meta and the events journaled by earlier
runs, so a face starts from the right totals on resume without reading any file."""

from __future__ import annotations

import os
import sys
from typing import TextIO

from moot.display.face import Face

__all__ = ["Face", "face_for"]


def face_for(
    *,
    quiet: bool = False,
    json_logs: bool = False,
    reveal: bool = False,
    stream: TextIO | None = None,
) -> Face:
    """The face for a run: JSON lines with `json_logs`, nothing with `quiet`, the live view
    on a terminal, plain lines otherwise. All of them write to `stream` (stderr)."""
    stream = stream or sys.stderr
    if json_logs:
        from moot.display.jsonlog import JsonLog

        return JsonLog(stream)
    if quiet:
        return Face()
    if not _maybe_terminal(stream):  # plain lines, without importing rich at all
        from moot.display.plain import PlainLog

        return PlainLog(stream, reveal=reveal)
    from rich.console import Console

    console = Console(file=stream)
    if console.is_terminal and not console.is_dumb_terminal:
        from moot.display.live import LiveView

        return LiveView(console, reveal=reveal)
    from moot.display.plain import PlainLog

    return PlainLog(stream, reveal=reveal)


def _maybe_terminal(stream: TextIO) -> bool:
    """False when rich would surely not call `stream` a terminal: not a tty, and neither of
    the variables by which rich is told otherwise (FORCE_COLOR, TTY_COMPATIBLE=1) is set."""
    if "FORCE_COLOR" in os.environ or os.environ.get("TTY_COMPATIBLE") == "1":
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except (OSError, ValueError):  # a closed or detached stream
        return False
