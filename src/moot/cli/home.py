"""`moot move-sessions`: bring the sessions an older moot kept in `./.moot/` into moot's one
home (`$MOOT_HOME`, else the platform's user data folder), so every command finds them."""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from moot.cli.common import fail, say

__all__ = ["move_sessions"]


@click.command(name="move-sessions")
@click.argument(
    "source",
    required=False,
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
)
def move_sessions(source: Path | None) -> None:
    """Move the sessions under SOURCE (default: ./.moot, where an older moot kept them) into
    moot's home; its prices.toml and lessons too, where the home has none. A session that is
    running, or whose code task still has worktrees (moot apply / moot clean first), stays."""
    from moot.engine.store import list_sessions, sessions_root
    from moot.errors import JournalLocked, StorageError
    from moot.files import LEGACY_HOME
    from moot.lifecycle.code import live_worktrees

    old_home = (source or Path.cwd() / LEGACY_HOME).expanduser().resolve()
    old = old_home / "sessions" if (old_home / "sessions").is_dir() else old_home
    target = sessions_root()
    if not old.is_dir():
        fail(f"{old} is not a folder; give the folder that holds the sessions (.moot)")
    if old.resolve() == target.resolve():
        fail(f"{old} is moot's home already ($MOOT_HOME); nothing to move")
    moved = kept = 0
    for folder in list_sessions(old):
        there = target / folder.id
        why = None
        if there.exists():
            why = f"{there} exists already"
        elif live_worktrees(folder):
            why = f"its worktrees still exist: moot apply or moot clean {folder.id} first"
        if why is None:
            try:
                lock = folder.acquire()
            except (JournalLocked, StorageError) as exc:
                why = str(exc)
            else:
                try:
                    target.mkdir(parents=True, exist_ok=True)
                    shutil.move(str(folder.path), str(there))
                finally:
                    lock.release()
                    (there / "lock").unlink(missing_ok=True)
                    (there / "lock.owner").unlink(missing_ok=True)
        if why is None:
            moved += 1
            say(f"moved {folder.id}")
        else:
            kept += 1
            say(f"kept {folder.id}: {why}", err=True)
    for name in ("prices.toml", "lessons"):  # the home's own win
        mine, home_one = old_home / name, target.parent / name
        if mine.exists() and not home_one.exists():
            shutil.move(str(mine), str(home_one))
            say(f"moved {name}")
    say(f"{moved} moved to {target}" + (f", {kept} kept in {old}" if kept else ""))
