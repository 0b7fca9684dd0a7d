"""After a code task: `moot apply`, `moot clean`, `moot stop`, and strays for `moot doctor`.

The library face of a code session's end of life; the CLI only prints what these return.
"""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path
from typing import Any

from msgspec import Struct

from moot.code import (
    Applied,
    Cleaned,
    Stray,
    apply_to_user_tree,
    clean_session,
    find_strays,
    list_worktrees,
    load_baseline,
    open_repo,
    save_patch,
)
from moot.code.workspace import CodeWorkspace
from moot.config import CodeSettings, read
from moot.engine.session import STOP_FILE
from moot.engine.store import SessionFolder, atomic_write, list_sessions, read_json
from moot.errors import MootError, WorkspaceError
from moot.report.code import APPLIED_FILE
from moot.types import alias_label

__all__ = [
    "AppliedChange",
    "apply_session",
    "clean",
    "code_settings",
    "live_worktrees",
    "prune_strays",
    "stop",
    "strays",
]


class AppliedChange(Struct, frozen=True):
    alias: str
    applied: Applied
    cleaned: Cleaned | None


def code_settings(folder: SessionFolder) -> CodeSettings | None:
    """The code task settings a session recorded (None: not a code task)."""
    meta = folder.meta() or {}
    raw = (meta.get("config") or {}).get("code")
    return read(CodeSettings, raw) if isinstance(raw, dict) else None


def _code(folder: SessionFolder) -> CodeSettings:
    settings = code_settings(folder)
    if settings is None:
        raise MootError(f"session {folder.id} is not a code task (it was run without --repo)")
    return settings


def _winner(folder: SessionFolder) -> str | None:
    result = read_json(folder.result_json) or {}
    details: dict[str, Any] = result.get("details") or {}
    winner = details.get("winner")
    return winner if isinstance(winner, str) else None


def _row(folder: SessionFolder, name: str) -> dict[str, Any]:
    """A change's row in the session's result (its status and verify results), or {}."""
    result = read_json(folder.result_json) or {}
    row = ((result.get("details") or {}).get("code") or {}).get(name)
    return row if isinstance(row, dict) else {}


def _failed_checks(folder: SessionFolder, name: str) -> tuple[int, int] | None:
    """(passed, run) when the change's verify commands ran and one failed; else None."""
    checks = [c for c in _row(folder, name).get("checks") or [] if isinstance(c, dict)]
    passed = sum(1 for c in checks if c.get("exit_code") == 0 and not c.get("timed_out"))
    return (passed, len(checks)) if checks and passed < len(checks) else None


def _resolve(agent: str, known: list[str]) -> str:
    """The change the user names: its own name (agent_b, or a candidate like b1), as the
    reports say it ('Agent B'), or the agent's letter ('B')."""
    if agent in known:
        return agent
    words = "_".join(agent.split()).lower()
    if words.isalpha() and len(words) <= 2 and f"agent_{words}" in known:
        return f"agent_{words}"
    return words


def _has_change(folder: SessionFolder, name: str) -> bool:
    patch = folder.path / "patches" / f"{name}.patch"
    return patch.is_file() and patch.stat().st_size > 0


def _why_no_change(folder: SessionFolder, name: str) -> str:
    """How an agent without a change ended, from the session's result: its row in the
    outcome's details, else its line in a failed run's summary ("Agent A: failed (...); ...")."""
    result = read_json(folder.result_json) or {}
    row = ((result.get("details") or {}).get("code") or {}).get(name)
    if isinstance(row, dict):
        status, problem = str(row.get("status") or ""), str(row.get("problem") or "")
    else:
        label = re.escape("Agent " + name.rsplit("_", 1)[-1].upper())
        text = str(result.get("stop_message") or result.get("how") or "")
        found = re.search(rf"^{label}: (\w+)(?: \((.*)\))?; ", text, re.MULTILINE)
        status, problem = (found.group(1), found.group(2) or "") if found else ("", "")
    if status == "failed":
        return f" (it failed: {problem})" if problem else " (it failed)"
    if status in ("cancelled", "running"):
        return f" (it was {status})" if status == "cancelled" else " (it did not finish)"
    return ""


def apply_session(
    folder: SessionFolder,
    agent: str | None = None,
    *,
    commit: bool = False,
    keep: bool = False,
    force: bool = False,
) -> AppliedChange:
    """Apply an agent's change (default: the session's winner) to the user's tree; clean the
    worktrees afterwards unless `keep`. A change whose verify commands failed is refused,
    touching nothing, unless `force`."""
    settings = _code(folder)
    repo = open_repo(settings.repo)
    baseline = load_baseline(repo, folder.id)
    if baseline is None:
        raise WorkspaceError(
            f"session {folder.id} has no baseline in {repo.root} any more (cleaned?); its "
            f"patches are in {folder.path / 'patches'}: apply one with git apply"
        )
    workspace = CodeWorkspace(settings, folder.id, folder.path)
    patches = sorted(
        p.name.removesuffix(".patch")
        for p in (folder.path / "patches").glob("*.patch")
        if _has_change(folder, p.name.removesuffix(".patch"))
    )
    # The reports name agents 'Agent A'; the session knows them as agent_a.
    alias = _resolve(agent, patches) if agent else _winner(folder)
    if alias is None:
        if not patches:
            raise MootError(f"no agent of session {folder.id} made a change; nothing to apply")
        raise MootError(
            f"session {folder.id} has no winner; name one with --agent ({', '.join(patches)})"
        )
    trees = {t.alias: t for t in list_worktrees(repo, folder.id) if t.state == "ready"}
    patch_file = workspace.patch_file(alias)
    if patch_file.exists():
        patch = patch_file.read_bytes()
    elif alias in trees:
        patch = save_patch(trees[alias], patch_file).patch
    else:
        shown = ", ".join(alias_label(p) for p in patches)
        others = f"agents with one: {shown}" if patches else "no agent has one"
        raise MootError(f"session {folder.id} has no change by {alias_label(alias)}; {others}")
    if not patch.strip():
        raise MootError(f"{alias} made no change{_why_no_change(folder, alias)}; nothing to apply")
    failed = _failed_checks(folder, alias)
    if failed is not None and not force:
        raise MootError(
            f"{alias_label(alias)}'s change failed its verify commands ({failed[0]} of "
            f"{failed[1]} passed), so it was not applied and nothing was touched; apply it "
            "anyway with --force"
        )
    message = f"moot: {alias}'s change from session {folder.id}" if commit else None
    applied = apply_to_user_tree(repo, baseline, patch, commit_message=message)
    _note_applied(folder, alias, applied)
    cleaned = None if keep else clean_session(repo, folder.id)
    return AppliedChange(alias, applied, cleaned)


def _note_applied(folder: SessionFolder, alias: str, applied: Applied) -> None:
    """Record which change was applied (`applied.json`) and show it in the reports."""
    from moot.report import refresh_reports

    record = {
        "agent": alias,
        "three_way": applied.three_way,
        "commit": applied.commit,
        "files": list(applied.paths),
    }
    atomic_write(folder.path / APPLIED_FILE, json.dumps(record, indent=2) + "\n")
    try:
        refresh_reports(folder)
    except MootError:  # a session whose journal cannot be read keeps its old reports
        pass


def clean(folder: SessionFolder) -> Cleaned:
    """Remove the session's worktrees, branches and baseline ref (patches stay)."""
    settings = _code(folder)
    return clean_session(open_repo(settings.repo), folder.id)


def live_worktrees(folder: SessionFolder) -> int:
    """How many of the session's worktrees still exist on disk (0: none, or not a code task)."""
    settings = code_settings(folder)
    if settings is None:
        return 0
    root = CodeWorkspace(settings, folder.id, folder.path).root
    return sum(1 for p in root.iterdir() if p.is_dir()) if root.is_dir() else 0


def stop(folder: SessionFolder) -> int | None:
    """Ask a running session to stop: a stop file that the Session checks before each ask
    (finished agents stay usable), and SIGTERM to the process of its latest run, which
    journals the interruption. Returns the pid signalled, if any."""
    (folder.path / STOP_FILE).write_text("stop\n", encoding="utf-8")
    pid = None
    try:
        lines = folder.events.read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    for line in reversed(lines):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("kind") == "run_started":
            pid = event.get("data", {}).get("pid")
            break
        if event.get("kind") in ("finished", "failed", "stopped"):
            return None  # not running
    if isinstance(pid, int) and pid != os.getpid():
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return None
        return pid
    return None


def _known_repos(extra: Path | None) -> list[Path]:
    found: dict[Path, None] = {}
    if extra is not None:
        try:
            found[open_repo(extra).root] = None
        except (WorkspaceError, OSError):  # not a repository (or no git here): nothing to check
            pass
    for folder in list_sessions():
        settings = code_settings(folder)
        if settings is not None and Path(settings.repo).is_dir():
            try:
                found[open_repo(settings.repo).root] = None
            except (WorkspaceError, OSError):
                continue
    return list(found)


def strays(cwd: Path | None = None) -> list[tuple[Path, Stray]]:
    """Leftover moot worktrees, branches and refs in the repositories moot knows of (those of
    its sessions, and the one at `cwd`)."""
    return [(root, s) for root in _known_repos(cwd) for s in find_strays(open_repo(root))]


def prune_strays(cwd: Path | None = None) -> list[tuple[Path, Cleaned]]:
    return [(root, clean_session(open_repo(root), s.session)) for root, s in strays(cwd)]
