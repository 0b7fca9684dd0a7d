"""Group commit (issue 23): answers that are journaled while an fsync is in flight share the next
one, and none returns before an fsync covers its line."""

from __future__ import annotations

import asyncio
import errno
import os
import threading
from pathlib import Path

import pytest

from moot.engine.head import read_head
from moot.engine.journal import Journal
from moot.errors import StorageError
from moot.types import Event, EventKind


def _event(n: int) -> Event:
    return Event(kind=EventKind.NOTE, step=f"s{n}", data={"text": "x" * 200}, ts=1.0)


class GatedFsync:
    """os.fsync that counts its calls on the journal and, while `gate` is clear, blocks them
    (in the thread that makes them) until it is set."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.calls = 0
        self.started = threading.Event()
        self.gate = threading.Event()
        self.real = os.fsync

    def __call__(self, fd: int) -> None:
        if os.path.samefile(f"/proc/self/fd/{fd}", self.path):
            self.calls += 1
            self.started.set()
            self.gate.wait(timeout=30)
        self.real(fd)


def test_answers_committed_together_share_fsyncs_and_keep_their_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "events.jsonl"
    journal, _ = Journal.open(path)
    journal.append(_event(0))
    fsync = GatedFsync(path)
    monkeypatch.setattr(os, "fsync", fsync)

    async def phase() -> list[int]:
        returned: list[int] = []

        async def one(n: int) -> None:
            await journal.commit(_event(n))
            returned.append(n)

        first = asyncio.ensure_future(one(1))
        await asyncio.to_thread(fsync.started.wait, 30)  # its fsync is in flight, held
        rest = [asyncio.ensure_future(one(n)) for n in range(2, 13)]
        await asyncio.sleep(0.05)
        assert returned == []  # no line is durable yet, so no commit has returned
        fsync.gate.set()
        await asyncio.gather(first, *rest)
        return returned

    returned = asyncio.run(phase())
    assert sorted(returned) == list(range(1, 13))
    assert fsync.calls == 2  # the first line's fsync, then one for the eleven written meanwhile
    monkeypatch.setattr(os, "fsync", fsync.real)
    journal.close()
    again, repair = Journal.open(path, repair=False)
    assert repair is None
    assert [e.step for e in again.events] == [f"s{n}" for n in range(13)]  # call order
    head = read_head(journal.head_path, None)
    assert head is not None and head.events == 13


def test_a_failed_group_fsync_fails_every_waiter_and_cuts_their_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fails under a group fsync: every answer waiting for it gets the StorageError,
    the lines it would have made durable are cut, and the journal takes no more lines."""
    folder = tmp_path / "20260101-000000-abcdef"
    folder.mkdir()
    path = folder / "events.jsonl"
    journal, _ = Journal.open(path)
    journal.append(_event(0))
    size = path.stat().st_size
    real = os.fsync

    def failing(fd: int) -> None:
        if os.path.samefile(f"/proc/self/fd/{fd}", path) and path.stat().st_size > size:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(fd)

    monkeypatch.setattr(os, "fsync", failing)

    async def phase() -> list[BaseException | Event]:
        return await asyncio.gather(
            *(journal.commit(_event(n)) for n in range(1, 5)), return_exceptions=True
        )

    results = asyncio.run(phase())
    assert all(isinstance(r, StorageError) for r in results), results
    assert f"moot resume {folder.name}" in str(results[0])
    assert path.stat().st_size == size and [e.step for e in journal.events] == ["s0"]
    monkeypatch.setattr(os, "fsync", real)
    with pytest.raises(StorageError):
        journal.append(_event(5))
    journal.close()
    assert [e.step for e in Journal.open(path)[0].events] == ["s0"]


def test_a_line_whose_waiter_was_cancelled_is_made_durable_by_close(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    journal, _ = Journal.open(path)
    journal.append(_event(0))

    async def cancelled() -> None:
        task = asyncio.ensure_future(journal.commit(_event(1)))
        await asyncio.sleep(0)  # the line is written and its fsync started
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    journal.close()
    again, _ = Journal.open(path, repair=False)
    assert [e.step for e in again.events] == ["s0", "s1"]
    head = read_head(journal.head_path, None)
    assert head is not None and head.events == 2


def test_a_deferred_line_is_written_before_the_next_line_or_at_close(tmp_path: Path) -> None:
    """`defer` (a verdict a resume can compute again) writes nothing by itself: the next line
    writes it first, in one fsync with it, and `close` writes what is left."""
    path = tmp_path / "events.jsonl"
    journal, _ = Journal.open(path)
    journal.append(_event(0))
    journal.defer(_event(1))
    assert [e.step for e in Journal.open(path, repair=False)[0].events] == ["s0"]
    journal.append(_event(2))
    journal.defer(_event(3))
    journal.close()
    again, _ = Journal.open(path, repair=False)
    assert [(e.step, e.seq) for e in again.events] == [("s0", 0), ("s1", 1), ("s2", 2), ("s3", 3)]
    head = read_head(journal.head_path, None)
    assert head is not None and head.events == 4


def test_a_deferred_line_lost_to_a_crash_leaves_a_journal_that_loads(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    journal, _ = Journal.open(path)
    journal.append(_event(0))
    journal.defer(_event(1))  # the process dies here: nothing of it reaches the file
    again, repair = Journal.open(path)
    assert repair is None and [e.step for e in again.events] == ["s0"]
