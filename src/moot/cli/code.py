"""A code session's worktrees: apply its change, clean them up, stop the session."""

from __future__ import annotations

import click

from moot.cli.common import say
from moot.text import plural
from moot.types import alias_label

__all__ = ["apply_", "clean", "stop"]


@click.command(name="apply")
@click.argument("session_id")
@click.option("--agent", "agent", default=None, help="Whose change (default: the winner).")
@click.option("--commit", is_flag=True, help="Also commit the change (never done otherwise).")
@click.option("--keep", is_flag=True, help="Keep the worktrees and branches afterwards.")
@click.option("--force", is_flag=True, help="Apply the change even if its verify commands failed.")
def apply_(session_id: str, agent: str | None, commit: bool, keep: bool, force: bool) -> None:
    """Apply a code session's chosen change to your working tree (three-way when your files
    changed since; refused, touching nothing, on a conflict or when the change failed its
    verify commands, unless --force); then clean its worktrees. --agent takes the agent as the
    reports name it ("Agent B") or its letter ("B")."""
    from moot.engine.store import find_session
    from moot.lifecycle.code import apply_session

    done = apply_session(find_session(session_id), agent, commit=commit, keep=keep, force=force)
    merged = done.applied.merged
    how = f" (merged with your edits to {', '.join(merged)} since the session began)"
    say(f"applied {alias_label(done.alias)}'s change: {done.applied.stats}{how if merged else ''}")
    if done.applied.commit:
        say(f"committed as {done.applied.commit[:12]}")
    if done.cleaned is not None:
        say(f"removed {plural(len(done.cleaned.worktrees), 'worktree')} and their branches")


@click.command()
@click.argument("session_id")
def clean(session_id: str) -> None:
    """Remove a code session's worktrees, branches and baseline ref (its patches stay)."""
    from moot.engine.store import find_session
    from moot.lifecycle.code import clean as clean_session

    done = clean_session(find_session(session_id))
    say(
        f"removed {plural(len(done.worktrees), 'worktree')}, "
        f"{plural(len(done.branches), 'branch', 'branches')}, {plural(len(done.refs), 'ref')}"
    )


@click.command()
@click.argument("session_id", required=False)
def stop(session_id: str | None) -> None:
    """Stop a running session gracefully (answers already in stay; moot resume continues)."""
    from moot.engine.store import find_session
    from moot.lifecycle.code import stop as stop_session

    folder = find_session(session_id)
    pid = stop_session(folder)
    say(f"asked session {folder.id} to stop" + (f" (process {pid})" if pid else " when it runs"))
