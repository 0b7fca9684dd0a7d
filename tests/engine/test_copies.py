"""A session's readable copies under rounds/ are written by a worker thread while the event
loop goes on to the next phase (issue 23: a phase's answers archive two files each); the run's
end waits for them, and one that cannot be written is still a warning."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from moot.engine import copies
from moot.engine.copies import FolderCopies
from moot.engine.store import SessionFolder
from moot.errors import StorageError


class Copies(FolderCopies):
    def __init__(self, path: Path) -> None:
        self.folder = SessionFolder(path)
        self.mode = "live"
        self._copying = {}
        self.warned: list[str] = []

    def warn(self, message: str) -> None:
        self.warned.append(message)


def test_an_archive_on_the_event_loop_is_written_off_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    written = copies._written

    def slow(path: Path, text: str) -> StorageError | None:
        release.wait(5)  # a busy disk
        return written(path, text)

    monkeypatch.setattr(copies, "_written", slow)
    session = Copies(tmp_path)

    async def phase() -> Path:
        name = session.archive("round1/a_solution", "the answer is 42")
        path = tmp_path / name
        assert not path.exists()  # the loop went on while the thread waits on the disk
        assert session.archive("round1/a_solution", "the answer is 42") == name  # once
        release.set()
        await session.copies_written()
        return path

    path = asyncio.run(phase())
    assert path.read_text() == "the answer is 42"
    assert not session._copying and not session.warned


def test_an_archive_that_cannot_be_written_is_a_warning_once_the_copies_are_waited_for(
    tmp_path: Path,
) -> None:
    (tmp_path / "rounds").write_text("in the way\n")
    session = Copies(tmp_path)

    async def run() -> None:
        session.archive("round1/a_solution", "one")
        session.archive("round1/b_solution", "two")
        await session.copies_written()

    asyncio.run(run())
    assert len(session.warned) == 2 and "optional copies" in session.warned[0]


def test_an_archive_outside_an_event_loop_is_written_at_once(tmp_path: Path) -> None:
    session = Copies(tmp_path)
    name = session.archive("round0/a_solution", "at once")
    assert (tmp_path / name).read_text() == "at once"
