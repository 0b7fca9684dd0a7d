"""Faces that show a session while it runs: the live terminal view, plain lines, JSON logs.

Each is a `Face`: a subscriber to the session's events (`Session.subscribe`, or the runner's
`subscribers=`) and a context manager the caller opens around the run. The runner's first
signal, `opened`, carries the session id, its begin meta and the events journaled by earlier
runs, so a face starts from the right totals on resume without reading any file."""

from __future__ import annotations

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
    from rich.console import Console

    console = Console(file=stream)
    if console.is_terminal and not console.is_dumb_terminal:
        from moot.display.live import LiveView

        return LiveView(console, reveal=reveal)
    from moot.display.plain import PlainLog

    return PlainLog(stream, reveal=reveal)
