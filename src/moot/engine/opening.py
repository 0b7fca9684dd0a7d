"""A session's folder and its begin event: made for a new run (`open_session`: session.json
and the begin event, known keys masked in both), or opened again to resume (`reopen_session`:
the journal, a torn last line cut, tampering refused unless accepted), and the checks that a
folder is one this moot writes (`current_format`, `begin_meta`). `engine/lifecycle.py` runs
the protocol over what these open."""

from __future__ import annotations

import json
import os
import platform
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moot import lazy
from moot.config import RunConfig
from moot.engine.agent import Agent
from moot.engine.head import anchors
from moot.engine.journal import Journal, key_from_env
from moot.engine.replies import masked
from moot.engine.store import (
    FORMAT_VERSION,
    SESSION_DIGEST,
    SessionFolder,
    atomic_write,
    folder_version,
    new_session_id,
    session_digest,
    storage_error,
)
from moot.errors import JournalError, StorageError
from moot.models.keys import call_settings_masked, known_secrets, remember_config_secrets
from moot.types import Event, EventKind
from moot.version import __version__

if TYPE_CHECKING:
    from moot.engine import evidence
else:
    (evidence,) = lazy.modules("moot.engine", "evidence")  # a resume's check for tampering

__all__ = ["begin_meta", "current_format", "open_session", "reopen_session"]


def current_format(folder: SessionFolder) -> SessionFolder:
    """Older session folders are read-only until `moot migrate` upgrades them."""
    version = folder_version(folder)
    if version < FORMAT_VERSION:
        raise JournalError(
            f"session {folder.id} was written in format version {version} by an older moot; "
            f"upgrade it first with: moot migrate {folder.id}"
        )
    return folder


def begin_meta(journal: Journal, folder: SessionFolder) -> dict[str, Any]:
    if not journal.events or journal.events[0].kind != EventKind.BEGIN:
        raise JournalError(f"{folder.events} does not start with a begin event; not a moot session")
    return journal.events[0].data


def open_session(
    root: Path,
    *,
    task: str,
    seed: int,
    protocol: str,
    config: RunConfig,
    agents: list[Agent],
    session_id: str | None = None,
) -> tuple[SessionFolder, Journal]:
    """Create a session folder, its session.json and its begin event; the folder is locked
    by the caller's `folder.acquire()` right after. A sessions folder that cannot be written
    (read-only, full, a file in its path) raises a StorageError naming it, leaving no folder.
    `session_id`: the id to use (a folder of that name must not exist yet)."""
    folder = SessionFolder(root / (session_id or new_session_id()))
    try:
        folder.path.mkdir(parents=True)
    except OSError as exc:
        raise storage_error(root, exc) from exc
    try:
        return folder, _begin(folder, task, seed, protocol, config, agents)
    except StorageError:
        shutil.rmtree(folder.path, ignore_errors=True)  # half made: nothing was asked in it
        raise


def _begin(
    folder: SessionFolder,
    task: str,
    seed: int,
    protocol: str,
    config: RunConfig,
    agents: list[Agent],
) -> Journal:
    """Write a new folder's session.json and its journal's begin event, known keys masked in
    every string of them (see `_masked_meta`)."""
    meta = _masked_meta(
        agents,
        {
            "format_version": FORMAT_VERSION,
            "session_id": folder.id,
            "protocol": protocol,
            "task": task,
            "seed": seed,
            "config": config.dump(),
            "aliases": {a.alias: a.spec for a in agents},
            "context_windows": {
                a.alias: a.model.capabilities.context_window for a in agents if a.model
            },
            # models that constrain their output to a schema get asked for JSON (arena)
            "schema_enforced": {
                a.alias: a.model.capabilities.json_schema for a in agents if a.model
            },
            "cwd": os.getcwd(),
            "moot_version": __version__,
        },
    )
    text = json.dumps(
        {
            **meta,
            "created": time.time(),
            "python": platform.python_version(),
            **anchors(key_from_env()),  # sealed head and signature, outside the lines
        },
        indent=2,
    )
    atomic_write(folder.session_json, text)
    # the begin event covers session.json: an edit to it is tampering (engine/evidence.py)
    begin = {**meta, SESSION_DIGEST: session_digest(json.loads(text))}
    journal, _ = Journal.open(folder.events, key_from_env())
    try:
        journal.append(Event(kind=EventKind.BEGIN, data=begin, ts=time.time()))
    finally:
        if not journal.events:  # the begin event failed: release the file
            journal.close()
    return journal


def _masked_meta(agents: list[Agent], meta: dict[str, Any]) -> dict[str, Any]:
    """The begin meta with every known key masked: the task (a key pasted into it), the
    config's strings (an option, a protocol section) and the rest. Session.json, the journal
    and all derived from them (result.json, the reports, list/show/status) hold it so; the run
    itself works from it too (`_session` reads the task from the begin event), so a resume
    and a replay ask the very prompts the first run asked. A config's header and base_url
    secrets are masked too (issue 30: no session file holds them): a resume takes them again
    from the user's config (`moot resume --config`)."""
    for agent in agents:
        remember_config_secrets(agent.config.headers, agent.config.base_url)
    meta = {**meta, "config": call_settings_masked(meta["config"])}
    if not known_secrets():
        return meta
    result: dict[str, Any] = masked(meta)
    return result


def reopen_session(
    folder: SessionFolder, *, accept_tampered: bool = False, accept_unsigned: bool = False
) -> tuple[Journal, dict[str, Any]]:
    """The journal of a session to resume (a torn last line cut and journaled as a warning)
    and its begin meta. A tampered session (engine/evidence.py) is refused unless
    `accept_tampered`, a signed one without its key unless `accept_unsigned`; what the user
    accepted is journaled."""
    journal, repair = Journal.open(folder.events, key_from_env(), accept_unsigned=accept_unsigned)
    meta = begin_meta(journal, folder)
    evidence.admit(folder, journal, accept_tampered=accept_tampered)
    if repair is not None:
        journal.append(
            Event(
                kind=EventKind.WARNING,
                ts=time.time(),
                data={
                    "message": f"cut a torn last line ({repair.dropped_bytes} bytes at line "
                    f"{repair.line}) left by a crash; nothing recorded before it was lost",
                },
            )
        )
    return journal, meta
