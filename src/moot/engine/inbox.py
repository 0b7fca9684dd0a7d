"""A person's notes to one agent while a session runs (`moot say ID --agent B "..."`).

Seed 000's manual intervention: a human sends an agent a message at any time and the
orchestrator picks it up on its next poll. Here `post` appends the note to the session folder's
inbox file (another process may be running the session, or none: a paused one). The running
Session reads the inbox at the next live ask of that agent, journals each new note as a `human`
event on that ask's step (fsync'd before the call), and adds it to the prompt, clearly marked
as the person's (`with_notes`). Resume and replay take the notes of a step from the journal,
never from the inbox, so the recorded prompt is rebuilt byte for byte.

The inbox is append-only and never emptied: a note journaled is known by its id, so a crash
between the journal line and anything else delivers it once.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct
from msgspec.structs import asdict

from moot.engine.store import SessionFolder, storage_error
from moot.errors import MootError
from moot.text import step_place
from moot.types import Event, EventKind, Message
from moot.types import alias_label as _label

__all__ = [
    "INBOX_FILE",
    "HumanNote",
    "Inbox",
    "NoteRefused",
    "accepts_notes",
    "delivery",
    "note_lines",
    "notes_of",
    "post",
    "resolve_agent",
    "with_notes",
]

INBOX_FILE = "inbox.jsonl"
MAX_NOTE_CHARS = 20_000  # a note, not a document: the agent's context is the limit that matters


class NoteRefused(MootError):
    """A note that cannot be sent: no such agent, an empty text, a finished session."""


class HumanNote(Struct, frozen=True):
    """One note from the person running the session to one agent."""

    id: str
    agent: str  # the alias it is for (agent_b)
    text: str
    sent: float  # when `post` wrote it

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> HumanNote | None:
        try:
            return cls(str(data["id"]), str(data["agent"]), str(data["text"]), float(data["sent"]))
        except (KeyError, TypeError, ValueError):
            return None  # a line cut by a crash, or edited: not a note


def resolve_agent(aliases: Iterable[str], name: str) -> str:
    """The alias `name` means: an alias (`agent_b`), a label (`Agent B`) or a letter (`B`,
    an agent's before a judge's). Raises NoteRefused naming the session's agents."""
    known = list(aliases)
    wanted = name.strip().lower().replace(" ", "_")
    for alias in known:
        if alias.lower() == wanted:
            return alias
    lettered = [a for a in known if a.rsplit("_", 1)[-1].lower() == wanted]
    agents = [a for a in lettered if a.startswith("agent_")]
    if len(agents) == 1:
        return agents[0]
    if len(lettered) == 1:
        return lettered[0]
    names = ", ".join(f"{_label(a)} ({a})" for a in known) or "none"
    raise NoteRefused(f"session has no agent {name!r}; its agents: {names}")


def _records(folder: SessionFolder) -> list[dict[str, Any]]:
    """The journal's lines as records, read-only (another process may be running it)."""
    try:
        lines = folder.events.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def _last_end(records: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The journal's last run start or end (None: an empty journal)."""
    for record in reversed(records):
        if record.get("kind") in ("run_started", "finished", "failed", "stopped"):
            found: Mapping[str, Any] = record
            return found
    return None


def _retried(records: Sequence[Mapping[str, Any]]) -> set[str]:
    """The agents a resume asks again: those whose latest answer to some step is a failed call
    (a failed session asks its failed calls again; every other recorded answer stands)."""
    latest: dict[str, Mapping[str, Any]] = {}
    for record in records:
        if record.get("kind") == EventKind.ASK and record.get("step"):
            latest[str(record["step"])] = record.get("data") or {}
    return {
        str(data.get("agent"))
        for data in latest.values()
        if (data.get("completion") or {}).get("status") == "error"
    }


def delivery(folder: SessionFolder, alias: str) -> str | None:
    """When a note to `alias` reaches its prompt, in words ("it joins Agent B's next prompt"),
    or None when no agent of the session will be asked again (it finished, or it failed and a
    resume only repeats its recorded answers, none of them a failed call)."""
    records = _records(folder)
    end = _last_end(records)
    kind = end.get("kind") if end else None
    who = _label(alias)
    if kind == EventKind.FINISHED:
        return None
    if kind == EventKind.FAILED:
        retried = _retried(records)
        if not retried:
            return None
        resume = f"moot resume {folder.id}"
        if alias in retried:
            return f"it joins {who}'s prompt when `{resume}` asks its failed call again"
        names = ", ".join(_label(a) for a in sorted(retried))
        return (
            f"`{resume}` asks again only the failed calls of {names}; the note joins "
            f"{who}'s prompt only if the run then goes on to ask {who}"
        )
    if kind == EventKind.STOPPED:
        return f"it joins {who}'s next prompt when `moot resume {folder.id}` continues the session"
    return f"it joins {who}'s next prompt"


def accepts_notes(folder: SessionFolder) -> bool:
    """Whether an agent of the session may still be asked (it has not finished, and a resume
    of a failed session asks some failed call again)."""
    records = _records(folder)
    end = _last_end(records)
    kind = end.get("kind") if end else None
    if kind == EventKind.FINISHED:
        return False
    return kind != EventKind.FAILED or bool(_retried(records))


def _refusal(folder: SessionFolder) -> str:
    end = _last_end(_records(folder)) or {}
    if end.get("kind") == EventKind.FINISHED:
        return (
            f"session {folder.id} has finished: no agent will be asked again; "
            f'ask a follow-up instead: moot ask {folder.id} "..."'
        )
    why = str((end.get("data") or {}).get("message") or "").strip()
    return (
        f"session {folder.id} failed{f' ({why})' if why else ''}, and no call of it failed: "
        f"`moot resume {folder.id}` repeats the agents' recorded answers and asks no agent "
        "again, so the note would never be read; start a new run with what you wanted to "
        "tell the agent in the task"
    )


def post(
    folder: SessionFolder, agent: str, text: str, *, clock: Callable[[], float] = time.time
) -> HumanNote:
    """Leave a note for `agent` of the session in `folder`: running, paused or interrupted
    (a finished session is refused, and so is a failed one a resume asks no agent of again).
    It reaches the agent's next prompt (`delivery` says when); the note is returned."""
    text = text.strip()
    if not text:
        raise NoteRefused("the note is empty")
    if len(text) > MAX_NOTE_CHARS:
        raise NoteRefused(f"the note has {len(text):,} characters; at most {MAX_NOTE_CHARS:,}")
    if not accepts_notes(folder):
        raise NoteRefused(_refusal(folder))
    aliases = (folder.meta() or {}).get("aliases") or {}
    note = HumanNote(secrets.token_hex(6), resolve_agent(aliases, agent), text, clock())
    line = json.dumps(asdict(note), ensure_ascii=False) + "\n"
    path = folder.path / INBOX_FILE
    try:  # one write of one line, appended: a running session reads whole lines only
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise storage_error(path, exc) from exc
    return note


def _read(path: Path) -> list[HumanNote]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    except (OSError, UnicodeDecodeError):
        return []
    notes = []
    for line in lines:
        if not line.endswith("\n"):
            break  # still being written
        try:
            data = json.loads(line)
        except ValueError:
            continue
        note = HumanNote.from_data(data) if isinstance(data, dict) else None
        if note is not None:
            notes.append(note)
    return notes


class Inbox:
    """A Session's view of the notes: those its journal holds, by step, and the inbox file's
    new ones for an agent."""

    def __init__(self, folder: Path, events: Sequence[Event]) -> None:
        self._path = folder / INBOX_FILE
        self._held: dict[str, list[HumanNote]] = {}
        self._taken: set[str] = set()
        for event in events:
            if event.kind == EventKind.HUMAN and event.step:
                self.hold(event)

    def hold(self, event: Event) -> None:
        """Count a journaled `human` event: its note belongs to its step's prompt."""
        note = HumanNote.from_data(event.data)
        if note is not None and event.step:
            self._held.setdefault(event.step, []).append(note)
            self._taken.add(note.id)

    def held(self, step: str) -> list[HumanNote]:
        """The notes journaled for `step`'s prompt, in journal order."""
        return list(self._held.get(step, ()))

    def new_for(self, alias: str) -> list[HumanNote]:
        """Notes in the inbox file for `alias` that no journal line holds yet, oldest first."""
        return [n for n in _read(self._path) if n.agent == alias and n.id not in self._taken]


def with_notes(messages: Sequence[Message], notes: Sequence[HumanNote]) -> tuple[Message, ...]:
    """`messages` with the person's notes after the last user message's text, marked as a
    human's (not another agent's, not the task's)."""
    if not notes:
        return tuple(messages)
    block = "\n\n".join(
        "=== A note from the person running this deliberation (a human, not another "
        f"agent) ===\n{n.text}\n=== end of the note ==="
        for n in notes
    )
    found = [i for i, m in enumerate(messages) if m.role == "user"]
    if not found:
        return (*messages, Message(role="user", content=block))
    last = found[-1]
    changed = Message(role="user", content=f"{messages[last].content}\n\n{block}")
    return (*messages[:last], changed, *messages[last + 1 :])


def notes_of(folder: SessionFolder) -> list[tuple[HumanNote, str | None]]:
    """Every note sent to the session, oldest first, each with the step whose prompt carried
    it (None: waiting for its agent's next ask). Read-only: another process may be running."""
    delivered: dict[str, str] = {}
    try:
        lines = folder.events.read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("kind") == EventKind.HUMAN:
            data = record.get("data") or {}
            if isinstance(data, dict) and record.get("step"):
                delivered[str(data.get("id"))] = str(record["step"])
    return [(n, delivered.get(n.id)) for n in _read(folder.path / INBOX_FILE)]


def note_lines(folder: SessionFolder, *, waiting: bool = False) -> list[str]:
    """One line per note, for `moot status` and the session page (`waiting`: only the notes
    not delivered yet)."""
    lines = []
    end = (_last_end(_records(folder)) or {}).get("kind")
    if accepts_notes(folder):
        pending = "waiting for its next ask"
    elif end == EventKind.FINISHED:
        pending = "not delivered: finished"
    else:
        pending = "not delivered: the session failed and no agent will be asked again"
    for note, step in notes_of(folder):
        if waiting and step:
            continue
        where = f"in its prompt at {step_place(step)}" if step else pending
        lines.append(f"Note to {_label(note.agent)} ({where}): {note.text}")
    return lines
