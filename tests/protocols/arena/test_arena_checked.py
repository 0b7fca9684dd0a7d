"""An answer's substance is checked once per session (issue 23): the verdict is journaled with
the answer, and a resume or replay reads it back instead of running the check again, so it
acts on the verdict the run acted on."""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import pytest

from moot import api
from moot.engine.session import Session
from tests.scripts import Debate, events, no_sleep, start, verdict

arena_run = importlib.import_module("moot.protocols.arena.run")  # the package exports `run`
RULE = arena_run._why


def _debate() -> Debate:
    return Debate(verdicts=[verdict("CONTINUE", 4), verdict("CONSENSUS", 9)])


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """What the arena's substance rule runs on from now on (it still decides): each
    solution with the prompts it answered and the task."""
    checked: list[tuple[str, ...]] = []

    def counted(solution: str, asked: Sequence[str], task: str) -> str | None:
        checked.append((solution, *asked, task))
        return RULE(solution, asked, task)

    monkeypatch.setattr(arena_run, "_why", counted)
    return checked


def test_a_resume_reads_each_journaled_answers_verdict_instead_of_checking_it_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected = start("task", _debate().config()).result
    before = _counting(monkeypatch)
    paused = start("task", _debate().config(limits={"max_tokens": 2500}))
    assert paused.result.status == "paused" and before
    notes = [e for e in events(paused.folder) if e["kind"] == "note"]
    assert len(notes) == len(set(before)) and all(
        e["step"].startswith("checked/arena_answer/") and e["data"] == {"problem": None}
        for e in notes
    )

    after = _counting(monkeypatch)
    resumed = api.resume(paused.session_id, limits={"max_tokens": 10**6}, sleep=no_sleep)
    assert resumed.exit_code == 0 and resumed.result.final_answer == expected.final_answer
    assert after, "the answers given after the pause are checked"
    assert not set(after) & set(before), "a journaled answer was checked again on resume"


def test_a_resume_acts_on_the_journaled_verdict_when_the_rule_now_says_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A newer moot that would refuse an answer the run took does not undo it on resume: the
    journaled verdict stands, so the resume asks nothing again."""
    debate = _debate()
    paused = start("task", debate.config(limits={"max_tokens": 2500}))
    before = set(debate.steps)
    monkeypatch.setattr(arena_run, "_why", lambda solution, asked, task: "no answer now")
    api.resume(paused.session_id, limits={"max_tokens": 10**6}, sleep=no_sleep)
    assert any(step.endswith("/reask") for step in debate.steps), "the new rule holds after"
    assert not [s for s in before if f"{s}/reask" in debate.steps], "a taken answer was undone"


def test_replay_runs_no_check_and_writes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    run = start("task", _debate().config())
    journal = (run.folder / "events.jsonl").read_bytes()
    checked = _counting(monkeypatch)
    assert api.replay(run.session_id).identical is True
    assert checked == [] and (run.folder / "events.jsonl").read_bytes() == journal


def test_a_session_journaled_without_verdicts_is_checked_again_and_replays_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A session an earlier moot wrote (no verdict notes) still resumes and replays: its
    answers are checked again, and replay writes no note."""
    with monkeypatch.context() as older:
        older.setattr(Session, "checked", lambda self, rule, texts, check: check())
        run = start("task", _debate().config())
    assert not [e for e in events(run.folder) if e["kind"] == "note"]
    journal = (run.folder / "events.jsonl").read_bytes()
    checked = _counting(monkeypatch)
    assert api.replay(run.session_id).identical is True
    assert checked and (run.folder / "events.jsonl").read_bytes() == journal


def test_a_resume_whose_prompts_changed_says_so_once_per_step_and_keeps_the_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The request digest an ask records is what shows a resume that the code now asks
    otherwise: the journaled answers are kept (nothing is asked again), and a warning names
    each step whose prompt changed."""
    from moot.protocols.arena import prompts

    debate = _debate()
    paused = start("task", debate.config(limits={"max_tokens": 2500}))
    asked = dict(debate.steps)
    monkeypatch.setattr(prompts, "SOLVE", "Answer this, in the format:\n{task}\n\n{format}")
    api.resume(paused.session_id, sleep=no_sleep)
    warned = [
        e["step"]
        for e in events(paused.folder)
        if e["kind"] == "warning" and "differs from the recorded one" in e["data"]["message"]
    ]
    # the solve prompts, and every later ask of those conversations, which carry them
    assert {s for s in asked if "/solve/" in s} <= set(warned) <= set(asked)
    assert len(warned) == len(set(warned)) and all(debate.steps[s] == 1 for s in asked)
