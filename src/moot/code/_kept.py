"""The files a diff touches, kept beside the worktree while `git apply` runs.

`git apply` replaces a file by removing it and writing the new one, file after file: a process
killed inside it leaves a worktree with files gone or half the diff applied, and the resume's
apply of the same diff (its effect was never journaled) then fails on them. So before git runs,
the touched files are kept (their bytes, or that they did not exist) in one file beside the
worktree, written whole and fsync'd; once git is done it is removed. An apply that finds one
for the same diff puts the files back first; one for another diff belongs to an apply that
ended (only its removal was lost) and is dropped.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

from moot.code._git import git
from moot.code._worktrees import Worktree
from moot.files import atomic_write, sync_folder

__all__ = ["drop", "keep", "put_back"]


def _kept_file(worktree: Worktree) -> Path:
    return worktree.path.parent / f".{worktree.path.name}.apply-kept.json"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _touched(worktree: Worktree, diffs: list[bytes]) -> list[str]:
    """The paths the diffs touch, as git reads them (renames give both); [] for one git cannot
    read, which it will not apply either."""
    paths: list[str] = []
    for data in diffs:
        done = git(["apply", "--numstat", "-z", "-"], cwd=worktree.path, input=data, check=False)
        if done.returncode != 0:
            continue
        for field in done.stdout.split(b"\0"):
            name = field.split(b"\t")[-1].decode("utf-8", "surrogateescape")
            if name and name not in paths:
                paths.append(name)
    return paths


def _inside(worktree: Worktree, name: str) -> Path | None:
    path = worktree.path / name
    root = worktree.path.resolve()
    return path if path.parent.resolve().is_relative_to(root) else None


def keep(worktree: Worktree, data: bytes, diffs: list[bytes]) -> None:
    """Keep the files `diffs` (the forms of one diff `data` that will be tried) touch."""
    files: dict[str, dict[str, str | int] | None] = {}
    for name in _touched(worktree, diffs):
        path = _inside(worktree, name)
        if path is None:
            continue
        if path.is_symlink():
            files[name] = {"link": os.readlink(path)}
        elif path.is_file():
            content = base64.b64encode(path.read_bytes()).decode("ascii")
            files[name] = {"bytes": content, "mode": path.stat().st_mode & 0o777}
        else:
            files[name] = None  # it did not exist
    body = json.dumps({"diff": _digest(data), "files": files})
    kept = _kept_file(worktree)
    atomic_write(kept, body)  # durable, its rename too, before git touches anything
    sync_folder(kept.parent)


def put_back(worktree: Worktree, data: bytes) -> None:
    """Undo what a killed `git apply` of `data` did; drop a kept file of another diff."""
    kept = _kept_file(worktree)
    try:
        record = json.loads(kept.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return
    except ValueError:  # not written whole: git never started
        record = {}
    if isinstance(record, dict) and record.get("diff") == _digest(data):
        for name, was in (record.get("files") or {}).items():
            path = _inside(worktree, name)
            if path is not None:
                _restore(path, was)
    drop(worktree)


def _restore(path: Path, was: dict[str, str | int] | None) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    if was is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if "link" in was:
        os.symlink(str(was["link"]), path)
        return
    atomic_write(path, base64.b64decode(str(was["bytes"])))
    path.chmod(int(was.get("mode", 0o644)))


def drop(worktree: Worktree) -> None:
    """Remove the kept file, durably: a stale one of this diff must not undo it later."""
    kept = _kept_file(worktree)
    try:
        kept.unlink()
    except FileNotFoundError:
        return
    sync_folder(kept.parent)
