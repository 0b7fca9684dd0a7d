"""What the two event streams send: a session's report each time its journal grows, and the
rows of the sessions page each time a shown session's state changes.

While a run goes on, the report is built from the events read so far (`report.view.build_view`
without a result); once the journal says the run ended, from the folder as `report.html` is
(`load_view`: the journal verified, result.json checked against it)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio

from moot.engine.state import seen_state
from moot.engine.store import SessionFolder, find_session, folder_problem, sessions_root
from moot.errors import MootError
from moot.report.view import SessionView, build_view, load_view
from moot.serve.follow import INTERVAL, Follower
from moot.serve.pages import now_html, report_main, row_html
from moot.serve.rows import row_of
from moot.types import Event, RoundSummary

__all__ = ["follow_rows", "follow_view", "view_now"]

_ENDS = ("run_started", "stopped", "finished", "failed")
ROWS_INTERVAL = 0.5  # seconds between checks of the shown sessions' state files
SETTLE = 5.0  # seconds an ended run may take to write its result.json


def _status(folder: SessionFolder) -> str:
    seen = seen_state(folder)
    return seen.status if seen is not None else "?"


def view_now(folder: SessionFolder) -> tuple[str, str]:
    """The session's status and its report as it stands (a journal being written is read as
    far as its complete lines go)."""
    try:
        view = load_view(folder)
    except MootError:
        view = build_view(None, _events(folder), folder)
    return _status(folder), report_main(view)


def _events(folder: SessionFolder) -> list[Event]:
    return Follower(folder.events).read()


def _ended(events: Sequence[Event]) -> bool:
    ends = [e.kind for e in events if e.kind in _ENDS]
    return bool(ends) and ends[-1] != "run_started"


async def _final(folder: SessionFolder, events: list[Event]) -> SessionView:
    """The view once the run ended: load_view as soon as result.json is written and matches
    the journal; the events' own view if it does not within SETTLE seconds."""
    deadline = time.monotonic() + SETTLE
    while time.monotonic() < deadline:
        try:
            return await anyio.to_thread.run_sync(load_view, folder)
        except MootError:
            await anyio.sleep(0.05)
    return build_view(None, events, folder)


async def _settled_status(folder: SessionFolder, ended: bool) -> str:
    """The status state.json shows; once the journal says the run ended, the status it ended
    with (state.json is written a moment after the journal's last line)."""
    status = _status(folder)
    deadline = time.monotonic() + SETTLE
    while ended and status == "running" and time.monotonic() < deadline:
        await anyio.sleep(0.05)
        status = _status(folder)
    return status


def _heard(folder: SessionFolder) -> tuple[RoundSummary | None, dict[str, Any] | None]:
    """The latest round summary state.json holds, and the state itself (None: none yet)."""
    seen = seen_state(folder)
    if seen is None:
        return None, None
    latest = seen.standing().latest
    return latest, {**seen.state, "status": seen.status}


async def follow_view(folder: SessionFolder) -> AsyncIterator[dict[str, Any]]:
    """An SSE message per growth of the journal: the report (`view`), then the status; and per
    change of state.json while the run goes on: who is working now (`now`), and the report
    again when a round ended (its summary is a signal the Session writes only there, so the
    timeline and chart gain each round's result as it ends, not only at the end)."""
    events: list[Event] = []
    follower = Follower(folder.events)
    results: dict[tuple[str, int | None], RoundSummary] = {}
    stamp = None
    while True:
        batch = follower.read()  # new bytes only: cheap enough for the loop
        fresh = _stamp(folder.state_json)
        if not batch and fresh == stamp:
            await anyio.sleep(INTERVAL)
            continue
        events.extend(batch)
        grown = bool(batch)
        if fresh != stamp:
            stamp = fresh
            latest, state = await anyio.to_thread.run_sync(_heard, folder)
            if latest is not None and results.get((latest.stage, latest.round)) != latest:
                results[(latest.stage, latest.round)] = latest
                grown = True
            if state is not None:
                yield {"event": "now", "data": now_html(state)}
        if not grown:
            continue
        if _ended(events):
            view = await _final(folder, events)
        else:
            view = build_view(None, events, folder, list(results.values()))
        yield {"event": "view", "data": report_main(view)}
        yield {"event": "status", "data": await _settled_status(folder, _ended(events))}


def _stamp(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return 0.0


def _newer(top: Path, newest: str) -> tuple[list[SessionFolder], bool]:
    """The sessions whose ids sort after `newest` (ids start with their creation time), and
    whether a newer folder is not a session yet (being created: look again)."""
    found, pending = [], False
    for path in sorted(p for p in top.iterdir() if p.is_dir() and p.name > newest):
        if folder_problem(path) is None:
            found.append(SessionFolder(path))
        else:
            pending = True
    return found, pending


async def follow_rows(
    root: Path | None, ids: Sequence[str], *, new: bool = False
) -> AsyncIterator[dict[str, Any]]:
    """An SSE `row` message for each shown session whose state.json or result.json changed;
    with `new`, also one for each session created since (the page puts it first)."""
    folders = []
    for sid in ids:
        try:
            folders.append(find_session(sid, root))
        except MootError:
            continue
    seen = {f.id: (_stamp(f.state_json), _stamp(f.result_json)) for f in folders}
    top = sessions_root() if root is None else root
    newest, listed = max((f.id for f in folders), default=""), 0.0
    while True:
        await anyio.sleep(ROWS_INTERVAL)
        if new and top.is_dir() and _stamp(top) != listed:
            found, pending = await anyio.to_thread.run_sync(_newer, top, newest)
            listed = 0.0 if pending else _stamp(top)
            for folder in found:
                newest = max(newest, folder.id)
                folders.append(folder)
                seen[folder.id] = (-1.0, -1.0)  # sent below, as a changed row
        for folder in folders:
            stamp = (_stamp(folder.state_json), _stamp(folder.result_json))
            if stamp != seen[folder.id]:
                seen[folder.id] = stamp
                row = await anyio.to_thread.run_sync(row_of, folder)
                yield {"event": "row", "data": row_html(row)}
