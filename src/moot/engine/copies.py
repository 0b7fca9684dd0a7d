"""The readable copies a session writes beside its journal: `rounds/` (seed 000's archive of
every answer) and a protocol's own files under the session folder. The journal holds their
text, so a copy that cannot be written is a warning, never the end of the run; replay writes
none. The Session's methods `archive` and `artifact`."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from moot.engine import startup
from moot.engine.store import SessionFolder, atomic_write
from moot.errors import StorageError

__all__ = ["FolderCopies"]


class FolderCopies:
    """`archive` and `artifact` as Session methods; the Session gives the folder, its mode and
    its journaled warnings."""

    folder: SessionFolder
    mode: Literal["live", "replay"]
    warn: Callable[[str], None]  # the Session's: a warning journaled once per session
    _copying: dict[Path, asyncio.Future[StorageError | None]]  # archives being written
    _waiting: dict[Path, str]  # archives to write once the event loop is idle

    def archive(self, name: str, text: str) -> str:
        """Write a human-readable copy under `rounds/` (seed 000 naming); returns its path.

        The 8-hex suffix comes from the session id and the name, so a resumed run rewrites the
        same file rather than adding a stale twin. On the engine's event loop the copy waits
        until the loop is idle (engine/startup.py, `when_idle`): a phase's answers archive two
        files each, a few system calls apiece, while the next phase waits for the loop. On
        another loop a worker thread writes it; `copies_written` writes or waits for what is
        left at the run's end."""
        suffix = hashlib.sha256(f"{self.folder.id}/{name}".encode()).hexdigest()[:8]
        relative = f"rounds/{name}_{suffix}.md"
        # (strings, not Path objects, until a copy is to be written: a resume archives every
        # answer again, and all but the last few are there already)
        if self.mode == "live" and not os.path.exists(f"{self.folder.path}/{relative}"):
            path = self.folder.path / relative
            if path in self._copying or path in self._waiting:
                return relative
            if startup.when_idle(lambda: self._write_waiting(path)):
                self._waiting[path] = text
                return relative
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self._copy(path, text)
            else:
                self._copying[path] = written = loop.run_in_executor(None, _written, path, text)
                written.add_done_callback(lambda done: self._copied(path, done))
        return relative

    async def copies_written(self) -> None:
        """Write every archive still waiting for an idle loop, and wait until every one being
        written is written (or warned about)."""
        for path in list(self._waiting):
            self._write_waiting(path)
        while self._copying:
            await asyncio.wait(list(self._copying.values()))

    def _write_waiting(self, path: Path) -> None:
        text = self._waiting.pop(path, None)
        if text is not None:  # (not written already by `copies_written`)
            with contextlib.suppress(StorageError):  # see `_copied`
                self._copy(path, text)

    def _copied(self, path: Path, done: asyncio.Future[StorageError | None]) -> None:
        del self._copying[path]
        failure = None if done.cancelled() else done.result()
        if failure is not None:
            # a journal that cannot take the warning either (the disk is full) has failed:
            # it refuses the run's next line, which ends the run with that error
            with contextlib.suppress(StorageError):
                self._warn_copy(failure)

    def _copy(self, path: Path, text: str) -> None:
        """Write an optional copy (the journal holds its text): a failure to write it (a full
        or read-only disk) is a warning, journaled once per reason, and the run goes on."""
        failure = _written(path, text)
        if failure is not None:
            self._warn_copy(failure)

    def _warn_copy(self, exc: StorageError) -> None:
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


def _written(path: Path, text: str) -> StorageError | None:
    """Write an optional copy; the failure to, if it failed (a full or read-only disk)."""
    try:
        atomic_write(path, text, durable=False)
    except StorageError as exc:
        return exc
    return None
