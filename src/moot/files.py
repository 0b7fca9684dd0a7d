"""Writing a file so that a reader sees the old one or the new one, never half of one: the
session folder's files, a code task's patches, the worktree manifest. Imports nothing of moot."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write"]


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
