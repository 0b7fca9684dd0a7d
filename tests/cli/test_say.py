"""`moot say ID --agent B "..."`: a note to one agent of a paused or running session, shown by
`moot status` and the reports; an unknown agent or a finished session exits 1."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from moot import api as runner
from moot.types import FailureKind
from tests.cli.test_cli import moot
from tests.scripts import Debate, no_sleep, start

NOTE = "Mind the units."


def test_say_to_a_paused_session_is_delivered_on_resume_and_reported(
    capsys: pytest.CaptureFixture[str],
) -> None:
    paused = start("task", Debate().config(limits={"max_tokens": 900}))
    assert paused.exit_code == 3
    sid = paused.session_id

    code, out, _ = moot(capsys, "say", sid, "--agent", "Agent B", NOTE)
    assert code == 0 and "Agent B (agent_b)" in out
    code, out, _ = moot(capsys, "status", sid)
    assert code == 0 and f"Note to Agent B (waiting for its next ask): {NOTE}" in out

    code, _, err = moot(capsys, "say", sid, "--agent", "Z", NOTE)
    assert code == 1 and "no agent 'Z'" in err and "Agent C (agent_c)" in err

    assert runner.resume(sid, limits={"max_tokens": 10**6}, sleep=no_sleep).exit_code == 0
    code, out, _ = moot(capsys, "status", sid, "--json")
    notes = json.loads(out)["notes"]
    assert [(n["agent"], n["text"]) for n in notes] == [("agent_b", NOTE)]
    assert notes[0]["step"] and notes[0]["step"].endswith("agent_b")
    report = (paused.folder / "report.md").read_text(encoding="utf-8")
    assert "## Notes from you" in report
    assert notes[0]["step"] == "r1/evaluate/agent_b"
    assert f"To Agent B, in its prompt at round 1 (evaluate): {NOTE}" in report
    assert "Notes from you" in (paused.folder / "report.html").read_text(encoding="utf-8")

    code, _, err = moot(capsys, "say", sid, "--agent", "B", "too late")
    assert code == 1 and "has finished" in err and f"moot ask {sid}" in err
    code, out, _ = moot(capsys)  # the command's module leaves the CLI's own `say` alone
    assert code == 0 and "say" in out and "Usage" in out


def test_the_library_says_too() -> None:
    paused = start("task", Debate().config(limits={"max_tokens": 900}))
    note = runner.say(paused.session_id, "b", NOTE)
    assert (note.agent, note.text) == ("agent_b", NOTE)
    line = (paused.folder / "inbox.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["id"] for x in line] == [note.id]


def test_a_failed_session_takes_a_note_only_for_a_call_its_resume_asks_again(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A failed session's resume asks again only its failed calls: a note to the agent whose
    call failed is delivered then; one to another agent may never be; none is, when no call
    failed (the resume repeats the recorded answers and fails again)."""
    from tests.protocols.arena.test_arena_finding import by_round
    from tests.scripts import verdict

    answers = {0: {"agent_a": "{code}, {description}.", "agent_c": "{{title}}"}}
    debate = Debate(
        answer=by_round(answers),
        verdicts=[verdict("CONTINUE", 3)],
        fail={"two"},
        fail_kind=FailureKind.AUTH,
    )
    run = start(
        "What is the capital of France?",
        debate.config(arena={"max_rounds": 1}, engine={"attempts": 1}),
    )
    assert run.exit_code == 1 and run.result.status == "failed", run.message
    sid = run.session_id
    code, out, _ = moot(capsys, "say", sid, "-a", "B", NOTE)
    assert code == 0
    assert f"it joins Agent B's prompt when `moot resume {sid}` asks its failed call again" in out
    code, out, _ = moot(capsys, "say", sid, "-a", "A", NOTE)
    assert code == 0
    assert (
        f"`moot resume {sid}` asks again only the failed calls of Agent B; the note joins "
        "Agent A's prompt only if the run then goes on to ask Agent A"
    ) in out


def test_a_failed_session_no_resume_asks_again_refuses_a_note(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from moot import protocols
    from moot.engine.session import Session
    from moot.errors import ProtocolAborted
    from moot.protocols.definition import Conduct, Participants, ProtocolDefinition
    from moot.types import Message, Outcome, Step
    from tests.protocols.test_protocol_definition import PollOptions, describe

    async def sketch(s: Session, task: str, opts: PollOptions) -> Outcome:
        for alias in s.aliases:
            await s.ask(
                alias, [Message(role="user", content=task)], step=Step.at(0, "draft", alias)
            )
        raise ProtocolAborted("nobody wrote a valid plan")

    protocols.register(
        ProtocolDefinition(
            name="sketch",
            summary="ask everyone once, then fail",
            options=PollOptions,
            conduct=Conduct(sketch, describe),
            participants=Participants(min_agents=2),
        )
    )
    try:
        debate = Debate()
        code, _, _ = moot(capsys, *debate.run_args("plan it"), "--protocol", "sketch")
        assert code == 1
        sessions = Path(os.environ["MOOT_HOME"]) / "sessions"
        sid = sorted(p.name for p in sessions.iterdir())[-1]
        code, out, err = moot(capsys, "say", sid, "-a", "A", NOTE)
        assert code == 1, out
        assert f"session {sid} failed (nobody wrote a valid plan), and no call of it failed" in err
        assert "the note would never be read" in err
        assert not (sessions / sid / "inbox.jsonl").exists()
    finally:
        protocols.unregister("sketch")
