"""Follow-ups: a new session that asks a further question of a finished one, its agents given
the earlier task, final answer and remaining disagreements as context.

The link is the new task's first line ("Follow-up to moot session ID."): journaled with the
task, so it replays and verifies as the rest of it does, and no other file records it. A
thread is a session and the sessions it follows, oldest first."""

from __future__ import annotations

import re

from msgspec import Struct

from moot.engine.store import SessionFolder, find_session
from moot.errors import ConfigError, MootError
from moot.lifecycle.listing import outcome_json

__all__ = ["Turn", "followup_task", "parent_id", "thread_of"]

_HEAD = "Follow-up to moot session {id}."
_LINK = re.compile(r"\AFollow-up to moot session (\S+)\.\n")
_QUESTION = "\n\nThe follow-up question:\n"
MAX_DEPTH = 50  # a thread longer than this is shown from its 50 latest sessions


def followup_task(folder: SessionFolder, question: str) -> str:
    """The task of a follow-up to the session in `folder`: the link, the earlier task, its
    final answer and remaining disagreements, then `question`."""
    if not question.strip():
        raise ConfigError("give the follow-up question")
    outcome = outcome_json(folder)
    if outcome.get("status") == "running":
        raise ConfigError(f"session {folder.id} is still running: ask once it has ended")
    answer = str(outcome.get("final_answer") or "").strip() or "(no final answer)"
    disagreements = [str(d) for d in outcome.get("disagreements") or []]
    parts = [
        _HEAD.format(id=folder.id),
        "",
        "An earlier deliberation answered this task:",
        str(outcome.get("task", "")).strip(),
        "",
        "Its final answer:",
        answer,
    ]
    if disagreements:
        parts += ["", "Disagreements that remained:", *(f"- {d}" for d in disagreements)]
    return "\n".join(parts) + _QUESTION + question.strip()


def parent_id(task: str) -> str | None:
    """The session a follow-up's task follows (None: not a follow-up)."""
    found = _LINK.match(task)
    return found.group(1) if found else None


class Turn(Struct, frozen=True):
    """One session of a thread: what was asked in it, and what it answered."""

    session_id: str
    question: str
    answer: str
    status: str


def _question(task: str) -> str:
    return task.rsplit(_QUESTION, 1)[1] if parent_id(task) and _QUESTION in task else task


def thread_of(folder: SessionFolder) -> list[Turn]:
    """The sessions `folder` follows, oldest first, then `folder` itself."""
    turns: list[Turn] = []
    current: SessionFolder | None = folder
    while current is not None and len(turns) < MAX_DEPTH:
        meta = current.meta() or {}
        task = str(meta.get("task", ""))
        try:
            outcome = outcome_json(current)
        except MootError:
            outcome = {}
        turns.append(
            Turn(
                current.id,
                _question(task),
                str(outcome.get("final_answer") or ""),
                str(outcome.get("status", "?")),
            )
        )
        parent = parent_id(task)
        try:
            current = find_session(parent, folder.path.parent) if parent else None
        except MootError:
            current = None
    return turns[::-1]
