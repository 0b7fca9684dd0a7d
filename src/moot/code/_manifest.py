"""The manifest: moot's record of what it is about to create in a repository.

One JSON file per session in `<git common dir>/moot/sessions/<session>.json`, written atomically
and fsync'd *before* each ref or worktree it names is created. A crash at any point therefore
leaves nothing in git that no manifest names (except what `find_strays` also finds by its
`moot/` prefix). It lives in the repository, not the session folder, so the strays of a session
whose folder was deleted can still be found from the repository alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from msgspec import Struct, field, to_builtins
from msgspec.structs import replace

from moot.code._repo import Repo
from moot.errors import WorkspaceError
from moot.files import atomic_write, sync_folder

__all__ = [
    "Entry",
    "Manifest",
    "delete_manifest",
    "read_manifest",
    "read_manifests",
    "write_manifest",
]

FORMAT = 1

EntryState = Literal["creating", "ready"]


class Entry(Struct, frozen=True):
    """One agent's worktree as recorded: `creating` until `git worktree add` has returned.
    `base`: the commit it started at and its change is measured against, when that is not the
    session's baseline (a worktree started from another's work, `create_worktrees`)."""

    alias: str
    path: str
    branch: str
    state: EntryState
    base: str | None = None


class Manifest(Struct, frozen=True):
    session: str
    session_dir: str | None
    root: str | None = None
    baseline: str | None = None
    worktrees: dict[str, Entry] = field(default_factory=dict)

    def with_entry(self, entry: Entry) -> Manifest:
        return replace(self, worktrees={**self.worktrees, entry.alias: entry})

    def without(self, alias: str) -> Manifest:
        return replace(self, worktrees={k: v for k, v in self.worktrees.items() if k != alias})


def _path(repo: Repo, session: str) -> Path:
    return repo.manifests / f"{session}.json"


def write_manifest(repo: Repo, manifest: Manifest) -> None:
    """Replace the session's manifest atomically and durably (file and folder fsync'd)."""
    target = _path(repo, manifest.session)
    body = {"format": FORMAT, **to_builtins(manifest)}
    atomic_write(target, json.dumps(body, indent=1, sort_keys=True))
    sync_folder(target.parent)  # the rename itself must survive a power cut, not just the bytes


def _parse(path: Path, raw: Any) -> Manifest:
    try:
        if raw.get("format") != FORMAT:
            raise ValueError(f"format {raw.get('format')!r}")
        entries = {
            alias: Entry(
                alias=alias,
                path=str(e["path"]),
                branch=str(e["branch"]),
                state=e["state"],
                base=e.get("base"),  # absent from manifests written before bases existed
            )
            for alias, e in raw.get("worktrees", {}).items()
        }
        return Manifest(
            session=str(raw["session"]),
            session_dir=raw.get("session_dir"),
            root=raw.get("root"),
            baseline=raw.get("baseline"),
            worktrees=entries,
        )
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise WorkspaceError(
            f"moot's manifest {path} is damaged ({exc}); remove it and run `moot doctor` to"
            " prune what it named"
        ) from exc


def read_manifest(repo: Repo, session: str) -> Manifest | None:
    path = _path(repo, session)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise WorkspaceError(f"cannot read moot's manifest {path}: {exc}") from exc
    return _parse(path, raw)


def read_manifests(repo: Repo) -> list[Manifest]:
    """Every session's manifest in the repository, by session id."""
    if not repo.manifests.is_dir():
        return []
    found = []
    for path in sorted(repo.manifests.glob("*.json")):
        manifest = read_manifest(repo, path.stem)
        if manifest is not None:
            found.append(manifest)
    return found


def delete_manifest(repo: Repo, session: str) -> None:
    """Remove the session's manifest, and moot's folder in the git directory once empty."""
    _path(repo, session).unlink(missing_ok=True)
    for folder in (repo.manifests, repo.manifests.parent):
        try:
            folder.rmdir()
        except OSError:  # not empty (other sessions) or already gone
            break
