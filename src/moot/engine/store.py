"""Where sessions live on disk, and how files there are written."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import secrets
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from msgspec import Struct

from moot import files
from moot.engine.lines import canonical_json
from moot.errors import JournalLocked, SessionNotFound, StorageError
from moot.files import LEGACY_HOME, moot_home

# The session folder's format: its journal's records, session.json and result.json
# (lifecycle/migrate.py upgrades an older folder).
FORMAT_VERSION = 1
# The begin event's key for the SHA-256 of session.json's content: the chain covers the file,
# and an edit to it is tampering (engine/evidence.py).
SESSION_DIGEST = "session_json_sha256"

__all__ = [
    "FORMAT_VERSION",
    "SESSION_DIGEST",
    "SessionFolder",
    "atomic_write",
    "blocked",
    "find_session",
    "folder_problem",
    "folder_version",
    "legacy_sessions_root",
    "list_sessions",
    "new_session_id",
    "read_json",
    "readable_root",
    "session_digest",
    "sessions_root",
    "storage_error",
    "unusable_folders",
    "unwritable",
]


def session_digest(content: Mapping[str, Any]) -> str:
    """The SHA-256 of session.json's content, as the begin event records it."""
    return hashlib.sha256(canonical_json(dict(content)).encode("utf-8")).hexdigest()


def sessions_root() -> Path:
    """`sessions/` under moot's home (`moot.files.moot_home`: `$MOOT_HOME`, else the
    platform's user data folder)."""
    return moot_home() / "sessions"


def readable_root(root: Path | None = None) -> Path:
    """`root` (default `sessions_root()`), where sessions are read; a StorageError naming the
    file and the fix when a file stands where it or a folder above it must be (MOOT_HOME set
    to a file), so that no session can be there: a reader says so, as a run does."""
    root = root or sessions_root()
    problem = blocked(root, "read")
    if problem is not None:
        raise StorageError(problem)
    return root


_FILE_IN_THE_WAY = "Move it, or set MOOT_HOME to a folder moot can write"


def blocked(folder: Path, doing: str = "write", fix: str = _FILE_IN_THE_WAY) -> str | None:
    """Why `folder` cannot be read or made, when a file stands where it or a folder above it
    must be (MOOT_HOME set to a file), worded as every reader and writer words it, with `fix`;
    else None. Creates nothing: `moot run --dry-run` asks it too."""
    file = files.file_in_the_way(folder)
    if file is None:
        return None
    return f"cannot {doing} {folder}: {file} is a file, not a folder. {fix}"


def unwritable(folder: Path) -> str | None:
    """Why a session folder cannot be made under `folder` (a file in its path, a read-only or
    virtual file system, no permission), worded as `open_session` words its failure; else
    None. Tried as the run would: a temporary folder is made in the nearest folder of the path
    that exists, and removed at once, so nothing is left behind (`moot run --dry-run`)."""
    problem = blocked(folder)
    if problem is not None:
        return problem
    existing = next((p for p in (folder, *folder.parents) if p.is_dir()), None)
    if existing is None:
        return None
    # the run names the first folder it could not make (or `folder` itself, if it exists)
    where = folder if existing == folder else existing / folder.relative_to(existing).parts[0]
    try:
        probe = tempfile.mkdtemp(prefix=".moot-check-", dir=existing)
    except OSError as exc:
        return str(storage_error(where, exc))
    with contextlib.suppress(OSError):
        os.rmdir(probe)
    return None


def legacy_sessions_root() -> Path | None:
    """`.moot/sessions` under the working directory, where an older moot kept its sessions,
    when it holds any and is not the home's own; `moot move-sessions` moves them home."""
    old = Path.cwd() / LEGACY_HOME / "sessions"
    try:
        if old.resolve() == sessions_root().resolve() or not any(old.iterdir()):
            return None
    except OSError:  # none there, or unreadable
        return None
    return old


_FIXES = {
    errno.ENOSPC: "free some space",
    errno.EDQUOT: "free some space (the disk quota is used up)",
    errno.EROFS: "the file system is read-only: remount it writable",
    errno.EACCES: "check its permissions",
    errno.EPERM: "check its permissions",
}


def storage_error(path: Path | str, exc: OSError, *, then: str = "") -> StorageError:
    """A StorageError for `exc`, met writing `path`: the path, the system's reason and the fix
    (free space, check permissions, or set MOOT_HOME to a folder moot can write). `then`, what to
    do once it is fixed (resume a session that lives there), replaces the MOOT_HOME advice."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    where = Path(path)  # not a temporary file beside it, or a folder made under it
    if isinstance(exc.filename, str) and exc.filename and where.is_relative_to(exc.filename):
        where = Path(exc.filename)  # a folder above it could not be made
    if exc.errno == errno.ENOTDIR:  # "Not a directory" names no path: name the file
        in_the_way = blocked(where, fix=f"Move it; {then}" if then else _FILE_IN_THE_WAY)
        if in_the_way is not None:
            return StorageError(in_the_way)
    fix = _FIXES.get(exc.errno or 0, "check the disk and its permissions")
    fix = fix[0].upper() + fix[1:]
    after = f"; {then}" if then else ", or set MOOT_HOME to a folder moot can write"
    return StorageError(f"cannot write {where}: {reason}. {fix}{after}")


def atomic_write(path: Path, data: str | bytes, *, durable: bool = True, then: str = "") -> None:
    """`moot.files.atomic_write`, a failure to write (a full or read-only disk) raised as a
    StorageError naming the path and the fix (`then`: what to do once it is fixed)."""
    try:
        files.atomic_write(path, data, durable=durable)
    except OSError as exc:
        raise storage_error(path, exc, then=then) from exc


def new_session_id() -> str:
    """Sortable by creation time, unique without coordination: `20261121-194012-3f9a1c`."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


class _File:
    """One file (or folder) of a session's folder, by name: `folder.events` is
    `folder.path / "events.jsonl"`."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, folder: SessionFolder, owner: type[SessionFolder]) -> Path:
        return folder.path / self.name


class SessionFolder(Struct, frozen=True):
    """A session's folder and the files in it."""

    path: Path

    @property
    def id(self) -> str:
        return self.path.name

    events = _File("events.jsonl")
    session_json = _File("session.json")
    state_json = _File("state.json")
    result_json = _File("result.json")
    report_md = _File("report.md")
    report_html = _File("report.html")
    rounds = _File("rounds")

    def lock(self) -> FileLock:
        # thread_local=False: the lock object is shared by the event loop and worker threads.
        return FileLock(self.path / "lock", thread_local=False)

    def acquire(self) -> FileLock:
        """Become the one writer of this session, or fail at once naming the holder (a folder
        that cannot be written fails with a StorageError)."""
        lock = self.lock()
        try:
            lock.acquire(timeout=0)
        except Timeout:  # (an OSError too: caught first)
            owner = (self.path / "lock.owner").read_text(errors="replace").strip() or "unknown"
            raise JournalLocked(
                f"session {self.id} is being run by another process ({owner}); wait for it to "
                f"finish, or stop it, then run: moot resume {self.id}"
            ) from None
        except OSError as exc:
            raise storage_error(self.path / "lock", exc) from exc
        try:
            (self.path / "lock.owner").write_text(f"pid {os.getpid()}\n")
        except OSError as exc:
            lock.release()
            raise storage_error(self.path / "lock.owner", exc) from exc
        return lock

    def state(self) -> dict[str, Any] | None:
        return read_json(self.state_json)

    def meta(self) -> dict[str, Any] | None:
        return read_json(self.session_json)


def _first_line(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.readline()
    except OSError:
        return b""


def folder_problem(path: Path) -> str | None:
    """Why the folder at `path` is not a session moot can use, or None if it is one.

    `moot run` writes a new folder's files in order: the folder and its lock, `session.json`,
    then the journal's begin event. A kill in between leaves a folder missing the later ones;
    nothing was asked in it yet."""
    if not (path / "session.json").is_file():
        return "it has no session.json"
    line = _first_line(path / "events.jsonl")
    if not line.strip():
        return "its journal holds no begin event"
    try:
        record = json.loads(line)
    except ValueError:
        return "its journal's begin event was cut off mid-write"
    if not isinstance(record, dict) or record.get("kind") != "begin":
        return "its journal does not start with a begin event"
    return None


def _folders(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    return sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.name)


def list_sessions(root: Path | None = None) -> list[SessionFolder]:
    """The sessions under `root`, oldest first (folders that are not sessions left out)."""
    return [SessionFolder(p) for p in _folders(root or sessions_root()) if not folder_problem(p)]


def unusable_folders(root: Path | None = None) -> list[tuple[SessionFolder, str]]:
    """Folders under `root` that are not sessions, each with why (see `folder_problem`)."""
    found = ((SessionFolder(p), folder_problem(p)) for p in _folders(root or sessions_root()))
    return [(folder, why) for folder, why in found if why is not None]


def _unusable(folder: SessionFolder, why: str) -> SessionNotFound:
    return SessionNotFound(
        f"{folder.path} is not a session moot can use: {why}. A moot stopped while creating "
        f"it (killed or crashed) leaves such a folder; nothing was asked in it, so there is "
        f"nothing to resume or show. Delete it (rm -r {folder.path}) and run the task again"
    )


def _nested(folders: list[SessionFolder], ref: str) -> SessionFolder | None:
    """A session a composition made inside another (the feature pipeline's tournaments, in
    `<session>/tournaments/<session>-<label>/`), by its exact id: not listed, but found."""
    for folder in folders:
        if ref.startswith(folder.id + "-"):
            candidate = folder.path / "tournaments" / ref
            if candidate.is_dir() and folder_problem(candidate) is None:
                return SessionFolder(candidate)
    return None


def find_session(ref: str | None, root: Path | None = None) -> SessionFolder:
    """A session by id, unique id prefix, or `last` (also when `ref` is None). A reference to
    a folder left by a kill during creation is refused saying so. Not found in moot's home,
    it is looked for where an older moot kept sessions (`legacy_sessions_root`)."""
    try:
        return _find(ref, root or sessions_root())
    except SessionNotFound:
        old = legacy_sessions_root() if root is None else None
        if old is None:
            raise
        try:
            return _find(ref, old)
        except SessionNotFound:
            pass
        raise


def _find(ref: str | None, root: Path) -> SessionFolder:
    folders = list_sessions(readable_root(root))
    unusable = unusable_folders(root)
    if ref in (None, "", "last", "latest"):
        if not folders:
            if unusable:
                raise _unusable(*unusable[-1])
            raise SessionNotFound(f'no sessions under {root}; start one with: moot run "TASK"')
        return folders[-1]
    assert ref is not None
    exact = [f for f in folders if f.id == ref]
    if exact:
        return exact[0]
    nested = _nested(folders, ref)
    if nested is not None:
        return nested
    for folder, why in unusable:
        if folder.id == ref:
            raise _unusable(folder, why)
    matches = [f for f in folders if f.id.startswith(ref) or f.id.endswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        broken = [(f, w) for f, w in unusable if f.id.startswith(ref) or f.id.endswith(ref)]
        if len(broken) == 1:
            raise _unusable(*broken[0])
        if not folders:
            raise SessionNotFound(f'no sessions under {root}; start one with: moot run "TASK"')
        raise SessionNotFound(f"no session {ref!r} under {root}; `moot list` shows them")
    names = ", ".join(f.id for f in matches[:5])
    raise SessionNotFound(f"{ref!r} matches several sessions ({names}); give more of the id")


def folder_version(folder: SessionFolder) -> int:
    """The format version a session folder was written in."""
    meta = folder.meta()
    if meta is not None and "format_version" in meta:
        return int(meta["format_version"])
    with folder.events.open("rb") as handle:
        first = handle.readline()
    try:
        record = json.loads(first) if first.strip() else {}
    except ValueError:
        return FORMAT_VERSION  # let the journal's own checks report the damage
    return FORMAT_VERSION if "hash" in record else 0
