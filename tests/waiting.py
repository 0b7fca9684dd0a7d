"""Waiting for what a test needs instead of sleeping a fixed time.

A test that kills or stops a run "once X has happened" waits for X itself: a line in the
session's journal (events.jsonl, one JSON object a line with "kind" and "step"), a file, a
state. The wait is bounded by a generous timeout (a loaded machine is slow, not broken) and
fails saying what never came.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

TIMEOUT = 60.0
POLL = 0.01

T = TypeVar("T")
Event = dict[str, Any]


def journal_events(folder: Path) -> list[Event]:
    """The complete lines of `folder`/events.jsonl (a line being written is skipped)."""
    path = folder / "events.jsonl"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    events: list[Event] = []
    for line in data.split(b"\n")[:-1]:  # the last piece has no newline yet: incomplete
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def wait_until(
    check: Callable[[], T],
    what: str,
    timeout: float = TIMEOUT,
    alive: Callable[[], bool] | None = None,
    detail: Callable[[], object] | None = None,
) -> T:
    """Poll `check` until it returns something truthy, and return that.
    Fails after `timeout` seconds, or as soon as `alive()` says the process that should bring
    it about has gone, naming `what` it waited for (and `detail()`, the state it saw)."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if alive is not None and not alive():
            found = check()  # it may have come just before the process ended
            if found:
                return found
            raise AssertionError(_failure(f"the process ended before {what}", detail))
        if time.monotonic() >= deadline:
            raise AssertionError(_failure(f"waited {timeout:.0f} s for {what}", detail))
        time.sleep(POLL)


def _failure(message: str, detail: Callable[[], object] | None) -> str:
    return message if detail is None else f"{message}; it saw: {detail()}"


def wait_for_journal(
    folder: Path | Callable[[], Path | None],
    predicate: Callable[[list[Event]], bool],
    what: str,
    timeout: float = TIMEOUT,
    alive: Callable[[], bool] | None = None,
) -> list[Event]:
    """Wait until the journal of `folder` (or of the folder `folder()` finds, once it exists)
    satisfies `predicate`; return its events then. A failure names the journal's last lines."""
    seen: list[Event] = []

    def check() -> bool:
        where = folder() if callable(folder) else folder
        if where is None:
            return False
        seen[:] = journal_events(where)
        return predicate(seen)

    def last_lines() -> list[str]:
        return [f"{e.get('kind')} {e.get('step') or ''}".rstrip() for e in seen[-12:]]

    wait_until(check, what, timeout, alive, detail=last_lines)
    return list(seen)


def asks(events: list[Event]) -> list[Event]:
    return [e for e in events if e.get("kind") == "ask"]


def has_ask(step_part: str = "", count: int = 1) -> Callable[[list[Event]], bool]:
    """A predicate: at least `count` ask lines whose step contains `step_part`."""

    def predicate(events: list[Event]) -> bool:
        return sum(1 for e in asks(events) if step_part in str(e.get("step"))) >= count

    return predicate


def has_kind(kind: str, count: int = 1) -> Callable[[list[Event]], bool]:
    """A predicate: at least `count` lines of this kind."""

    def predicate(events: list[Event]) -> bool:
        return sum(1 for e in events if e.get("kind") == kind) >= count

    return predicate
