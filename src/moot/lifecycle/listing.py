"""A session as the faces list and show it: one row of `moot list`, the outcome of
`moot show --json`. The CLI and the MCP server give the same shapes."""

from __future__ import annotations

import json
from typing import Any

from moot.engine.seal import folder_result_problem
from moot.engine.state import seen_state
from moot.engine.store import SessionFolder
from moot.lifecycle.code import live_worktrees

__all__ = ["outcome_json", "session_checks", "session_row"]


def session_row(folder: SessionFolder, now: float, *, checked: bool = True) -> dict[str, Any]:
    """One session as `moot list` shows it, and as `moot list --json` prints it. `checked=False`
    leaves out what reads the journal and the repository (`session_checks`), for a listing that
    filters the rows first."""
    seen = seen_state(folder)
    meta = folder.meta() or {}
    created = meta.get("created")
    return {
        "session_id": folder.id,
        "protocol": str(meta.get("protocol", "?")),
        "status": seen.status if seen is not None else "?",
        "created": float(created) if isinstance(created, int | float) else None,
        "elapsed": seen.standing().elapsed(now) if seen is not None else None,
        "task": str(meta.get("task", "")),
        **(session_checks(folder) if checked else {}),
        "path": str(folder.path),
    }


def session_checks(folder: SessionFolder) -> dict[str, Any]:
    """The costly part of a row: worktrees still on disk, and a result.json that does not match
    the journal (edited, or the journal cut)."""
    return {"worktrees": live_worktrees(folder), "problem": folder_result_problem(folder)}


def outcome_json(folder: SessionFolder) -> dict[str, Any]:
    """The outcome as result.json holds it (checked against the journal); a session with no
    outcome yet (running, crashed) as it stands, in the same fields where they apply."""
    from moot.report.view import load_view  # imported late: `moot list` does not need it

    view = load_view(folder)  # refuses an edited or stale result.json, a broken journal
    if folder.result_json.exists() and view.status != "running":
        data: dict[str, Any] = json.loads(folder.result_json.read_text(encoding="utf-8"))
        return data
    return {
        "session_id": view.session_id,
        "protocol": view.protocol,
        "task": view.task,
        "status": view.status,
        "consensus": view.consensus,
        "how": view.how,
        "trust": view.trust,
        "final_answer": view.final_answer,
        "rounds": view.rounds_done,
        "disagreements": view.disagreements,
        "positions": view.positions,
        "aliases": view.aliases,
        "tokens": view.tokens,
        "cost": view.cost,
        "stop_message": view.stop_message,
    }
