"""Where moot keeps its files (`moot_home`), and writing a file so that a reader sees the old
one or the new one, never half of one: the session folder's files, a code task's patches, the
worktree manifest. Imports nothing of moot."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Literal

__all__ = [
    "LEGACY_HOME",
    "atomic_write",
    "file_in_the_way",
    "moot_home",
    "sync_folder",
    "user_folder",
]

# Where moot kept its files before it had one home: `.moot/` under the working directory.
LEGACY_HOME = ".moot"


def moot_home() -> Path:
    """The folder of moot's sessions, cache, prices and lessons: `$MOOT_HOME`, else the
    platform's user data folder (~/.local/share/moot on Linux, ~/Library/Application
    Support/moot on macOS, %LOCALAPPDATA%\\moot on Windows), so that every command finds every
    session wherever it is started."""
    home = os.environ.get("MOOT_HOME")
    if home:
        return Path(home).expanduser()
    return user_folder("data")


# On Linux, the XDG base directories: the variable when it holds an absolute path, else the default.
_XDG = {"config": ("XDG_CONFIG_HOME", "~/.config"), "data": ("XDG_DATA_HOME", "~/.local/share")}


def user_folder(kind: Literal["config", "data"]) -> Path:
    """moot's folder of `kind` for this user, as platformdirs finds it. On Linux, with HOME an
    absolute path and the XDG variable unset, empty or absolute, that is the XDG rule, read here:
    importing platformdirs costs a run some 4 ms before its first request (tests/test_files.py
    checks both agree). Anything else (macOS, Windows, Android, a relative HOME or XDG path,
    which platformdirs' versions read differently): platformdirs."""
    variable, default = _XDG[kind]
    base = os.environ.get(variable, "").strip()
    if (
        sys.platform == "linux"
        and not hasattr(sys, "getandroidapilevel")
        and os.path.isabs(os.environ.get("HOME", ""))
        and (not base or os.path.isabs(base))
    ):
        return Path(base or os.path.expanduser(default)) / "moot"
    import platformdirs

    if kind == "config":
        return Path(platformdirs.user_config_dir("moot", appauthor=False))
    return Path(platformdirs.user_data_dir("moot", appauthor=False))


def file_in_the_way(folder: Path) -> Path | None:
    """The file that stands where `folder` or a folder above it must be, so that `folder`
    can be neither read nor made; None when there is none."""
    for part in (folder, *folder.parents):
        if part.exists():
            return None if part.is_dir() else part
    return None


def atomic_write(path: Path, data: str | bytes, *, durable: bool = True) -> None:
    """Write to a temporary file in the same folder, then rename over `path`.

    Readers see the old file or the new one, never half of one. `durable` adds an fsync; derived
    files that can be rebuilt from the journal skip it. Text is written as a file opened for
    text writes it: UTF-8, each newline the platform's line end; bytes as they are."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, str):
                data = data.replace("\n", os.linesep).encode("utf-8")
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def sync_folder(folder: Path) -> None:
    """fsync a folder, so that a rename or removal in it survives a power cut, not just the
    bytes of the files."""
    handle = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)
