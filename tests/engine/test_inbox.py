"""A person's note to one agent (`moot say`): journaled as a human event, in that agent's next
prompt and no other's, delivered once, and rebuilt from the journal on resume and replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot import api as runner
from moot.engine.inbox import (
    NoteRefused,
    note_lines,
    notes_of,
    post,
    resolve_agent,
    with_notes,
)
from moot.engine.store import SessionFolder, find_session
from moot.types import Message, Request
from tests.scripts import Debate, events, no_sleep, solution, start

NOTE = "Please check the units before you answer."


def _carrying(requests: list[Request], alias: str) -> list[Request]:
    return [r for r in requests if r.meta["agent"] == alias and NOTE in r.prompt]


def test_a_note_sent_while_paused_reaches_only_that_agents_next_prompt_on_resume() -> None:
    debate = Debate()
    paused = start("task", debate.config(limits={"max_tokens": 900}))
    assert paused.exit_code == 3
    folder = SessionFolder(paused.folder)
    note = post(folder, "B", NOTE)
    assert note.agent == "agent_b"
    assert notes_of(folder) == [(note, None)]  # waiting for its agent's next ask
    asked_before = len(debate.requests)

    resumed = runner.resume(paused.session_id, limits={"max_tokens": 10**6}, sleep=no_sleep)
    assert resumed.exit_code == 0
    later = debate.requests[asked_before:]
    b_asks = [r for r in later if r.meta["agent"] == "agent_b"]
    assert b_asks, "agent B should be asked again after the resume"
    assert _carrying(later, "agent_b") == [b_asks[0]]  # its next prompt, once
    assert not [r for r in debate.requests if r.meta["agent"] != "agent_b" and NOTE in r.prompt]
    assert "a human, not another agent" in b_asks[0].prompt

    human = [e for e in events(paused.folder) if e["kind"] == "human"]
    assert [(h["step"], h["data"]["text"], h["data"]["agent"]) for h in human] == [
        (b_asks[0].meta["step"], NOTE, "agent_b")
    ]
    asks = {e["step"]: e for e in events(paused.folder) if e["kind"] == "ask"}
    assert NOTE in asks[human[0]["step"]]["data"]["prompt"]  # the journal shows what was sent
    assert notes_of(folder) == [(note, human[0]["step"])]
    assert human[0]["step"] == "r1/evaluate/agent_b"  # said in words, not as the step id
    assert note_lines(folder) == [f"Note to Agent B (in its prompt at round 1 (evaluate)): {NOTE}"]

    report = runner.replay(paused.session_id)
    assert report.identical is True
    assert not [e for e in events(paused.folder) if e["kind"] == "warning"]


def test_a_note_sent_during_a_run_is_picked_up_at_that_agents_next_ask() -> None:
    sent: list[str] = []

    def answer(alias: str, step: str) -> str:
        if alias == "agent_a" and not sent:  # the person writes while the run goes on
            sent.append(post(find_session(None), "agent_b", NOTE).id)
        return solution(f"the answer is 42 ({alias})")

    debate = Debate(answer=answer)
    run = start("task", debate.config())
    assert run.exit_code == 0 and sent
    carrying = _carrying(debate.requests, "agent_b")
    assert len(carrying) == 1
    assert not [r for r in debate.requests if r.meta["agent"] != "agent_b" and NOTE in r.prompt]
    human = [e for e in events(run.folder) if e["kind"] == "human"]
    assert [h["step"] for h in human] == [carrying[0].meta["step"]]
    assert runner.replay(run.session_id).identical is True


def test_a_finished_session_or_an_unknown_agent_is_refused(tmp_path: Path) -> None:
    run = start("task", Debate().config())
    folder = SessionFolder(run.folder)
    with pytest.raises(NoteRefused, match="has finished"):
        post(folder, "B", NOTE)
    with pytest.raises(NoteRefused, match=r"no agent 'Z'.*Agent A \(agent_a\)"):
        resolve_agent(["agent_a", "agent_b"], "Z")
    with pytest.raises(NoteRefused, match="empty"):
        post(folder, "B", "   ")
    assert not (folder.path / "inbox.jsonl").exists()


def test_agents_are_named_by_alias_label_or_letter() -> None:
    aliases = ["agent_a", "agent_b", "judge_a"]
    assert resolve_agent(aliases, "agent_b") == "agent_b"
    assert resolve_agent(aliases, "Agent B") == "agent_b"
    assert resolve_agent(aliases, "b") == "agent_b"
    assert resolve_agent(aliases, "A") == "agent_a"  # an agent's letter before a judge's
    assert resolve_agent(aliases, "Judge A") == "judge_a"


def test_the_note_joins_the_last_user_message() -> None:
    from moot.engine.inbox import HumanNote

    note = HumanNote("1", "agent_b", "hello", 0.0)
    messages = (Message(role="system", content="s"), Message(role="user", content="task"))
    shown = with_notes(messages, [note])
    assert shown[0] == messages[0] and len(shown) == 2
    assert shown[1].content.startswith("task\n\n=== A note from the person")
    assert with_notes(messages, []) == messages


def test_the_plain_log_says_when_a_note_joins_a_prompt() -> None:
    from moot.display.plain import format_event
    from moot.types import Event, EventKind

    event = Event(
        kind=EventKind.HUMAN, step="r1/evaluate/agent_b", data={"agent": "agent_b", "text": NOTE}
    )
    assert format_event(event) == f"round 1 (evaluate): your note to Agent B: {NOTE}"


def test_a_note_its_agent_was_never_asked_for_again_says_so_once_the_session_finished() -> None:
    import json

    run = start("task", Debate().config())
    folder = SessionFolder(run.folder)
    note = {"id": "x1", "agent": "agent_b", "text": NOTE, "sent": 1.0}  # sent as it ended
    (folder.path / "inbox.jsonl").write_text(json.dumps(note) + "\n")
    assert note_lines(folder) == [f"Note to Agent B (not delivered: finished): {NOTE}"]
