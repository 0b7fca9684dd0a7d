"""A session's readable copies under rounds/ wait while the event loop goes on to the next phase
(issue 23: a phase's answers archive two files each): on the engine's loop until it is idle
(engine/startup.py, `when_idle`), on another loop in a worker thread. The run's end writes or
waits for what is left, and one that cannot be written is still a warning."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from moot.engine import copies, startup
from moot.engine.copies import FolderCopies
from moot.engine.store import SessionFolder
from moot.errors import StorageError


class Copies(FolderCopies):
    def __init__(self, path: Path) -> None:
        self.folder = SessionFolder(path)
        self.mode = "live"
        self._copying = {}
        self._waiting = {}
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


@pytest.mark.parametrize("on", ["a loop of the caller's", "the engine's loop"])
def test_an_archive_that_cannot_be_written_is_a_warning(tmp_path: Path, on: str) -> None:
    """Written by a worker thread or when the engine's loop is idle (the first), or left for
    the run's end (the second): each failure is a warning."""
    (tmp_path / "rounds").write_text("in the way\n")
    session = Copies(tmp_path)

    async def run() -> None:
        session.archive("round1/a_solution", "one")
        await asyncio.sleep(startup.IDLE * 4)
        session.archive("round1/b_solution", "two")
        await session.copies_written()

    (asyncio.run if on == "a loop of the caller's" else _on_the_engines_loop)(run())
    assert len(session.warned) == 2 and "optional copies" in session.warned[0]


def test_an_archive_outside_an_event_loop_is_written_at_once(tmp_path: Path) -> None:
    session = Copies(tmp_path)
    name = session.archive("round0/a_solution", "at once")
    assert (tmp_path / name).read_text() == "at once"


def _on_the_engines_loop(work: Any) -> Any:
    loop = startup.event_loop()
    try:
        return loop.run_until_complete(work)
    finally:
        loop.close()


def test_on_the_engines_loop_an_archive_is_written_on_it_once_it_is_idle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writers: list[threading.Thread] = []
    written = copies._written

    def noted(path: Path, text: str) -> StorageError | None:
        writers.append(threading.current_thread())
        return written(path, text)

    monkeypatch.setattr(copies, "_written", noted)
    session = Copies(tmp_path)

    async def phase() -> Path:
        name = session.archive("round1/a_solution", "the answer is 42")
        assert session.archive("round1/a_solution", "the answer is 42") == name  # once
        path = tmp_path / name
        for _ in range(100):  # busy: callbacks ready, the loop never waits
            await asyncio.sleep(0)
        assert not path.exists() and writers == []
        await asyncio.sleep(startup.IDLE * 4)  # the models think: the loop is idle
        assert path.read_text() == "the answer is 42"
        return path

    _on_the_engines_loop(phase())
    assert writers == [threading.main_thread()]  # once, by the loop itself: no worker thread
    assert not session._waiting and not session._copying and not session.warned


def test_what_waits_for_an_idle_loop_is_written_by_the_runs_end(tmp_path: Path) -> None:
    session = Copies(tmp_path)

    async def busy() -> list[Path]:
        paths = [tmp_path / session.archive(f"round1/{x}_solution", x) for x in "ab"]
        assert not any(p.exists() for p in paths)
        await session.copies_written()  # the run ends before the loop was ever idle
        return paths

    paths = _on_the_engines_loop(busy())
    assert [p.read_text() for p in paths] == ["a", "b"]
    assert not session._waiting


def test_idle_work_that_fails_is_reported_and_the_rest_is_done() -> None:
    done: list[str] = []
    reported: list[dict[str, Any]] = []

    def broken() -> None:
        raise RuntimeError("a bug")

    async def phase() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _, ctx: reported.append(ctx))
        assert startup.when_idle(broken) and startup.when_idle(lambda: done.append("next"))
        await asyncio.sleep(startup.IDLE * 4)

    _on_the_engines_loop(phase())
    assert done == ["next"]
    assert [type(c["exception"]) for c in reported] == [RuntimeError]


def test_no_idle_work_is_taken_outside_the_engines_loop() -> None:
    assert not startup.when_idle(lambda: None)  # no running loop

    async def other() -> bool:
        return startup.when_idle(lambda: None)

    assert not asyncio.run(other())  # a loop of the caller's own
