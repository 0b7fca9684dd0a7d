"""Upgrade a session folder written by an older moot to the current format.

Format versions:
  0  before the hash chain: `events.jsonl` holds one plain JSON event a line (`seq`, `ts`,
     `kind`, `step`, `data`) with no `prev`, `hash` or `hmac`; the begin event and
     `session.json` carry no `format_version` and no `context_windows`; `result.json` has no
     `format_version`.
  1  now: a hash-chained journal (with an HMAC when MOOT_JOURNAL_KEY is set) and
     `format_version` in `session.json`, the begin event and `result.json`.

Older folders are read-only: resume and replay refuse them and name `moot migrate`. Migrating
copies the old files into `format-v<N>-backup/` inside the session folder first, rewrites the
journal event by event (same kinds, steps, data and timestamps, newly chained and sealed in
`head.json`), seals the stored result to it, then checks that replaying the new journal gives the
stored result. Version 1 folders written before sealed heads existed need no migration: their
journal is sealed by its next append, and a result without a journal head still loads.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from moot.engine.head import HEAD_NAME, anchors
from moot.engine.journal import Journal, key_from_env
from moot.engine.result import Result
from moot.engine.seal import seal_result
from moot.engine.state import StateWriter
from moot.engine.store import (
    FORMAT_VERSION,
    SESSION_DIGEST,
    SessionFolder,
    atomic_write,
    find_session,
    folder_version,
    read_json,
    session_digest,
)
from moot.errors import JournalError
from moot.lifecycle.replay import replay
from moot.report import write_reports
from moot.types import Event, load

__all__ = ["Migration", "folder_version", "migrate"]

DEFAULT_CONTEXT_WINDOW = 128_000  # what the engine assumes for an alias with no recorded window
_NOT_BACKED_UP = ("lock", "lock.owner")


class Migration(Struct, frozen=True):
    session_id: str
    from_version: int
    to_version: int
    backup: Path | None  # None: nothing to do
    events: int
    replay_identical: bool | None
    # The replay differs only as the rule that labels are moot's finding explains (the
    # ReplayReport's `changed`, lifecycle/replay.py): what it says, else None.
    replay_changed: str | None = None


def _read_unchained(path: Path) -> list[Event]:
    events: list[Event] = []
    for number, line in enumerate(path.read_bytes().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            event = Event.from_record(json.loads(line))
        except (ValueError, KeyError, TypeError) as exc:
            raise JournalError(f"{path}, line {number} is not a version 0 event ({exc})") from None
        if event.seq != len(events):
            raise JournalError(f"{path}, line {number} has seq {event.seq}, not {len(events)}")
        events.append(event)
    if not events or events[0].kind != "begin":
        raise JournalError(f"{path} does not start with a begin event; not a moot session")
    return events


def _upgrade_meta(meta: dict[str, Any]) -> dict[str, Any]:
    windows = meta.get("context_windows") or {
        alias: DEFAULT_CONTEXT_WINDOW for alias in meta.get("aliases", {})
    }
    return {**meta, "format_version": FORMAT_VERSION, "context_windows": windows}


def _backup(folder: SessionFolder, version: int) -> Path:
    backup = folder.path / f"format-v{version}-backup"
    if backup.exists():
        raise JournalError(
            f"{backup} already exists: an earlier migration stopped half way. Move the files "
            "in it back into the session folder, delete it, and migrate again"
        )
    staging = folder.path / f".format-v{version}-backup.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    for path in folder.path.iterdir():
        if path.is_file() and path.name not in _NOT_BACKED_UP and not path.name.startswith("."):
            shutil.copy2(path, staging / path.name)
    os.replace(staging, backup)  # the backup appears whole or not at all
    return backup


def migrate(ref: str | None, *, root: Path | None = None) -> Migration:
    """Upgrade session `ref` to the current format; the old files stay in a backup folder."""
    folder = find_session(ref, root)
    lock = folder.acquire()
    try:
        version = folder_version(folder)
        if version == FORMAT_VERSION:
            return Migration(folder.id, version, version, None, 0, None)
        if version > FORMAT_VERSION:
            raise JournalError(
                f"session {folder.id} has format version {version}, newer than this moot "
                f"({FORMAT_VERSION}): upgrade moot instead"
            )
        events = _read_unchained(folder.events)
        backup = _backup(folder, version)
        try:
            return _upgrade(folder, version, events, backup)
        except BaseException:
            _restore(folder, backup)
            raise
    finally:
        lock.release()


def _restore(folder: SessionFolder, backup: Path) -> None:
    """Put the old files back after a failed migration."""
    for path in backup.iterdir():
        shutil.copy2(path, folder.path / path.name)
    for name in (".events.jsonl.migrating", f".{HEAD_NAME}.migrating", HEAD_NAME):
        if not (backup / name).exists():  # written by this migration
            (folder.path / name).unlink(missing_ok=True)
    shutil.rmtree(backup)


def _upgrade(folder: SessionFolder, version: int, events: list[Event], backup: Path) -> Migration:
    key = key_from_env()
    meta = _upgrade_meta({k: v for k, v in events[0].data.items() if k != SESSION_DIGEST})
    session = read_json(folder.session_json) or {}
    upgraded_meta = {**_upgrade_meta({**meta, **session}), **anchors(key)}
    session_text = json.dumps(upgraded_meta, indent=2)
    # the new begin event covers the new session.json, as a session begun now does
    begin = {**meta, SESSION_DIGEST: session_digest(json.loads(session_text))}
    events[0] = replace(events[0], data=begin)

    fresh = folder.path / ".events.jsonl.migrating"
    fresh_head = folder.path / f".{HEAD_NAME}.migrating"
    fresh.unlink(missing_ok=True)
    fresh_head.unlink(missing_ok=True)
    journal, _ = Journal.open(fresh, key, head=fresh_head)
    for event in events:
        journal.append(Event(kind=event.kind, step=event.step, data=event.data, ts=event.ts))
    journal.close()
    stored = read_json(folder.result_json)
    upgraded: Result | None = None
    if stored is not None:
        try:
            upgraded = load({**stored, "format_version": FORMAT_VERSION}, Result)
        except ValueError as exc:  # msgspec's ValidationError: what, and where ("at `$.cost`")
            raise JournalError(
                f"{folder.result_json} does not fit the current result format, so it was left "
                f"as it was: {exc}"
            ) from None
    os.replace(fresh, folder.events)
    os.replace(fresh_head, folder.path / HEAD_NAME)  # a crash before this: no head, accepted

    atomic_write(folder.session_json, session_text)
    if upgraded is not None:
        # Sealed to the new journal; the replay below checks that it is what the journal gives.
        atomic_write(folder.result_json, seal_result(upgraded, journal).to_json())

    report = replay(folder.id, root=folder.path.parent)
    if stored is None:
        atomic_write(folder.result_json, report.result.to_json())
    write_reports(folder, report.result, journal.events)
    state = StateWriter(folder, meta)
    state.absorb(journal.events)
    state.set_status(report.result.status, report.result.stop_message)
    return Migration(
        folder.id, version, FORMAT_VERSION, backup, len(events), report.identical, report.changed
    )
