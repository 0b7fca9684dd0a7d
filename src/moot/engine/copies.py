"""The readable copies a session writes beside its journal: `rounds/` (seed 000's archive of
every answer) and a protocol's own files under the session folder. The journal holds their
text, so a copy that cannot be written is a warning, never the end of the run; replay writes
none. The Session's methods `archive` and `artifact`."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from moot.engine.store import SessionFolder, atomic_write
from moot.errors import StorageError

__all__ = ["FolderCopies"]


class FolderCopies:
    """`archive` and `artifact` as Session methods; the Session gives the folder, its mode and
    its journaled warnings."""

    folder: SessionFolder
    mode: Literal["live", "replay"]
    warn: Callable[[str], None]  # the Session's: a warning journaled once per session

    def archive(self, name: str, text: str) -> str:
        """Write a human-readable copy under `rounds/` (seed 000 naming); returns its path.

        The 8-hex suffix comes from the session id and the name, so a resumed run rewrites the
        same file rather than adding a stale twin."""
        suffix = hashlib.sha256(f"{self.folder.id}/{name}".encode()).hexdigest()[:8]
        path = self.folder.rounds / f"{name}_{suffix}.md"
        if self.mode == "live" and not path.exists():
            self._copy(path, text)
        return str(path.relative_to(self.folder.path))

    def _copy(self, path: Path, text: str) -> None:
        """Write an optional copy (the journal holds its text): a failure to write it (a full
        or read-only disk) is a warning, journaled once per reason, and the run goes on."""
        try:
            atomic_write(path, text, durable=False)
        except StorageError as exc:
            cause = exc.__cause__
            reason = cause.strerror if isinstance(cause, OSError) and cause.strerror else exc
            self.warn(
                f"cannot write the optional copies in {self.folder.path} (rounds/ and the "
                f"like: {reason}); the journal holds their text, so the run goes on"
            )

    def artifact(self, relative: str, text: str) -> str:
        """Write a human-readable file at `relative` under the session folder (a protocol's
        own layout, such as `refine/pass_01/critic.md`); returns the relative path.

        Live mode only (replay writes nothing); atomic, so a reader never sees half a file. A
        resumed run rewrites the same files with the same content."""
        root = self.folder.path.resolve()
        path = (root / relative).resolve()
        if not path.is_relative_to(root) or path == root or relative.startswith("/"):
            raise ValueError(f"artifact path {relative!r} must stay inside the session folder")
        if self.mode == "live":
            self._copy(path, text)
        return str(path.relative_to(root))
