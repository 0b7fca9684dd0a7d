"""Issue 30: a malformed JSON reply is repaired off the event loop, within a time limit, once.

The session repairs it in a worker process (engine/repair.py) where the reply is first parsed
(`ask_parsed`) and journals the result as a note; a replay or a resume takes the note and
repairs nothing, so reading a session is linear in its size. A reply cut at the size cap is
marked truncated and never repaired.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections import OrderedDict
from typing import Any

import pytest

from moot import api as runner
from moot.engine import repair as worker
from moot.text import jsonfix
from tests.court_scripts import Court, agreeable
from tests.scripts import events, start

PG = "Use Postgres."
# a trailing comma: json.loads refuses it, json_repair fixes it
REPAIRABLE = (
    '{"vote": "abstain", "newPositionText": "Use Postgres.", "reasoning": "x", "confidence": 0.9,}'
)
HOSTILE = "{" * 60_000  # under REPAIR_CAP; json_repair takes about 30 s over it


def _spy_in_process(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every repair made in this process (on the event loop), with an empty known-repair table."""
    calls: list[str] = []
    real = jsonfix.repair

    def spy(target: str) -> dict[str, Any] | None:
        calls.append(target)
        return real(target)

    monkeypatch.setattr(jsonfix, "repair", spy)
    monkeypatch.setattr(jsonfix, "_KNOWN", OrderedDict())
    return calls


def _repair_notes(folder: Any) -> list[dict[str, Any]]:
    return [e for e in events(folder) if e["kind"] == "note" and e["step"].endswith("/json_repair")]


def test_a_slow_repair_leaves_the_event_loop_free_and_is_cut_off_at_its_time_limit() -> None:
    """Other agents' answers are not held up: a task ticks every 10 ms while a repair that
    would take about 30 s runs, and the repair ends (unrepaired) at its limit."""

    async def main() -> tuple[dict[str, Any] | None, float, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        task = asyncio.create_task(ticker())
        began = time.monotonic()
        value = await worker.repair_off_loop(HOSTILE, seconds=1.0)
        took = time.monotonic() - began
        task.cancel()
        return value, took, ticks

    value, took, ticks = asyncio.run(main())
    assert value is None
    assert 1.0 <= took < 6.0
    assert ticks >= 40  # about 100 in a second when the loop is free; 0 if the repair blocked it


def test_a_repair_in_the_worker_gives_json_repairs_object() -> None:
    value = asyncio.run(worker.repair_off_loop("Here: {'a': 1, 'b': [1, 2,]"))
    assert value == {"a": 1, "b": [1, 2]}
    # json_repair raises RecursionError on deep nesting: unrepairable, not a crash
    assert asyncio.run(worker.repair_off_loop('{"a":' * 10_000)) is None


def test_a_malformed_reply_is_repaired_once_off_the_loop_and_replay_repairs_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _spy_in_process(monkeypatch)
    court = Court({"one": agreeable(PG), "two": agreeable(PG), "three": lambda ask: REPAIRABLE})
    run = start("Which database?", court.config())
    assert run.exit_code == 0
    first = run.result.details["court"]["agentDebate"]["rounds"][0]["responses"]
    assert all(r["status"] == "ok" for r in first)  # repaired
    assert calls == []  # not on the event loop: in the worker
    notes = _repair_notes(run.folder)
    assert notes and all(n["data"]["value"]["confidence"] == 0.9 for n in notes)

    # replay and resume read the note: no repair, in the worker or here
    async def no_worker(target: str, seconds: float | None = None) -> None:
        raise AssertionError("repaired again")

    monkeypatch.setattr(worker, "repair_off_loop", no_worker)
    monkeypatch.setattr(jsonfix, "_KNOWN", OrderedDict())
    report = runner.replay(run.session_id)
    assert report.identical is True
    assert calls == []


def test_an_old_session_without_the_note_is_repaired_off_the_loop_on_replay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A session journaled before the notes replays the same: its repair is made again, in the
    worker (replay writes nothing)."""
    # a repair an earlier test made is known in this process: the run would take it from
    # there and write no note (the test failed whenever a court test ran before it)
    monkeypatch.setattr(jsonfix, "_KNOWN", OrderedDict())
    court = Court({"one": agreeable(PG), "two": agreeable(PG), "three": lambda ask: REPAIRABLE})
    run = start("Which database?", court.config())
    journal = run.folder / "events.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    assert _repair_notes(run.folder)
    calls = _spy_in_process(monkeypatch)
    # the notes are gone from the journal the session reads
    monkeypatch.setattr("moot.engine.session.Session.noted", lambda self, step: None, raising=True)
    report = runner.replay(run.session_id)
    assert report.identical is True and calls == []
    assert journal.read_text(encoding="utf-8").splitlines(keepends=True) == lines


def test_a_reply_over_the_cap_is_marked_truncated_and_never_repaired(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _spy_in_process(monkeypatch)
    made: list[str] = []
    real = worker.repair_off_loop

    async def counted(target: str, seconds: float | None = None) -> dict[str, Any] | None:
        made.append(target)
        return await real(target, seconds)

    monkeypatch.setattr(worker, "repair_off_loop", counted)
    huge = '{"vote": "abstain", "newPositionText": "' + "x" * 5_000  # cut, so never closed
    court = Court({"one": agreeable(PG), "two": agreeable(PG), "three": lambda ask: huge})
    run = start("Which database?", court.config(engine={"max_reply_bytes": 2_000}))
    assert run.exit_code == 0
    asks = [e for e in events(run.folder) if e["kind"] == "ask"]
    cut = [a for a in asks if a["data"]["completion"].get("truncated_from") == len(huge)]
    assert cut
    responses = run.result.details["court"]["agentDebate"]["rounds"][0]["responses"]
    assert any("cut at the size cap: not repaired" in (r.get("error") or "") for r in responses)
    assert calls == [] and made == [] and not _repair_notes(run.folder)


def test_a_worker_starved_of_the_cpu_is_not_killed_before_its_cpu_time_is_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under load a repair whose worker waited for a core longer than the limit came back
    unrepairable, and the run took another course (a flaky court test showed it). The limit is
    the worker's CPU time: a worker stopped (SIGSTOP) for longer than its limit still repairs."""
    real = asyncio.create_subprocess_exec

    async def starved(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        process = await real(*args, **kwargs)
        os.kill(process.pid, signal.SIGSTOP)  # waits for a core it does not get

        async def resume() -> None:
            await asyncio.sleep(1.5)
            os.kill(process.pid, signal.SIGCONT)

        keep.append(asyncio.ensure_future(resume()))
        return process

    keep: list[asyncio.Future[None]] = []
    monkeypatch.setattr(worker.asyncio, "create_subprocess_exec", starved)
    value = asyncio.run(worker.repair_off_loop("Here: {'a': 1, 'b': [1, 2,]", seconds=1.0))
    assert value == {"a": 1, "b": [1, 2]}
