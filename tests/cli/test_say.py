"""`moot say ID --agent B "..."`: a note to one agent of a paused or running session, shown by
`moot status` and the reports; an unknown agent or a finished session exits 1."""

from __future__ import annotations

import json

import pytest

from moot import api as runner
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
    assert f"To Agent B, in its prompt at {notes[0]['step']}: {NOTE}" in report
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
