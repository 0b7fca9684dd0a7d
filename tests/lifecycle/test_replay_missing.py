"""`moot replay` of a finished session whose journal lacks a step today's code makes (issue 30):
it says the session finished and names the step and what kind of effect it is, not that the
session never finished."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from moot import api
from moot.engine.journal import Journal
from moot.errors import ReplayIncomplete
from moot.types import Event
from tests.cli.test_cli import moot
from tests.scripts import Debate, start, verdict

REASK = "r1/verify/agent_c/reask"


def without_the_reask(folder: Path) -> None:
    """The journal as code that never re-asked a judge would have written it: the re-ask's
    line gone, the hash chain and its sealed head rebuilt through the journal's own API."""
    events = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    assert [e["step"] for e in events if e["kind"] == "ask"][-1] == REASK
    (folder / "events.jsonl").unlink()
    (folder / "head.json").unlink()
    journal, _ = Journal.open(folder / "events.jsonl", None)
    for e in events:
        if e.get("step") != REASK:
            journal.append(Event(kind=e["kind"], step=e.get("step"), data=e["data"], ts=e["ts"]))
    journal.close()


def finished_session() -> Path:
    """A finished run whose judge answered without a <verdict> block, so it was re-asked."""
    debate = Debate(verdicts=["I think they agree.", verdict("CONSENSUS", 9)])
    run = start("What is 6 times 7?", debate.config())
    assert run.result.status != "failed"
    return run.folder


def test_replay_names_the_re_ask_the_journal_never_recorded(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    folder = finished_session()
    stored = (folder / "result.json").read_bytes()
    without_the_reask(folder)
    code, out, err = moot(capsys, "replay", folder.name)
    assert code == 1, out
    assert (
        f"session {folder.name} finished, but replaying it needs {REASK} (a re-ask the journal "
        "never recorded): the code that computes its outcome has changed since; its recorded "
        "outcome stands"
    ) in err
    assert "never finished" not in err and "would not have ended" not in out + err
    assert (folder / "result.json").read_bytes() == stored  # replay reads; it never rewrites
    with pytest.raises(ReplayIncomplete) as caught:
        api.replay(folder.name)
    assert (caught.value.step, caught.value.effect) == (REASK, "a re-ask")
