"""Old sessions under the rule that labels are moot's finding: session folders written by the
code before it (tests/sessions/, made at commit 80fd3df with scripted agents) still show, their
result.json reads and writes back byte for byte, and `moot replay` reports a label that
changes under the new rule as a changed outcome naming the rule, not as corruption.

    20261126-093435-e1585e  a judge says CONSENSUS 10/10 over final answers 408, 418, 400
    20261126-093436-cf1ad1  B and C move from 418 to A's 408 in round 1; the judge says 9/10
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from moot import api
from moot.deliberation.finding import judge_answers
from moot.engine import requests as requests_module
from moot.engine.head import Head, write_head
from moot.engine.journal import Journal
from moot.engine.result import Result
from moot.engine.session import Session
from moot.engine.store import SessionFolder
from moot.lifecycle import plan as plans
from moot.lifecycle.plan import Plan
from moot.types import Message, ModelVerdict, Outcome, Step
from tests.cli.test_cli import moot
from tests.lifecycle.test_migrate import make_v0

SESSIONS = Path(__file__).resolve().parent / "sessions"
JUDGED = "20261126-093435-e1585e"
PERSUADED = "20261126-093436-cf1ad1"


def old_session(home: Path, session_id: str) -> Path:
    target = home / "sessions" / session_id
    shutil.copytree(SESSIONS / session_id, target)
    return target


ROUNDS = ((0, "solve"), (1, "revise"))  # the steps that hold each round's answers


def _solution(text: str) -> str:
    found = re.search(r"<solution>(.*?)</solution>", text, re.DOTALL)
    return found.group(1).strip() if found else text


async def recorded_answers(s: Session, agents: list[str]) -> list[dict[str, str | None]]:
    """Each agent's answer after rounds 0 and 1, as the old session recorded them (a replay
    returns the recorded completion whatever the prompt)."""
    history: list[dict[str, str | None]] = []
    for r, phase in ROUNDS:
        asks = [Message(role="user", content=phase)]
        replies = await s.gather(*(s.ask(a, asks, step=Step.at(r, phase, a)) for a in agents))
        history.append({a: _solution(c.text) for a, c in zip(agents, replies, strict=True) if c.ok})
    return history


def on_the_finding(
    monkeypatch: pytest.MonkeyPatch, says: str = "called it consensus", *, final_only: bool = False
) -> None:
    """A protocol on the finding, in place of the arena (whatever today's arena does): it reads
    the answers the old session recorded, and moot judges them, the judge's verdict weighed as
    evidence (as deliberation/finding.py asks every protocol to). `final_only`: moot sees only
    the final answers (no first answers to tell persuasion apart)."""

    def protocol(plan: Plan) -> Any:
        async def judged(s: Session) -> Outcome:
            agents = sorted(a for a in s.aliases if a.startswith("agent_"))
            history = await recorded_answers(s, agents)
            history = history[-1:] if final_only else history
            verdict = ModelVerdict(by="Agent C", role="judge", says=says, claims_agreement=True)
            j = judge_answers(history, started=agents, verdicts=[verdict])
            return Outcome(
                protocol="arena",
                status="consensus" if j.consensus else "no_consensus",
                consensus=j.consensus,
                how=j.finding.reason,
                final_answer=j.finding.claim or "",
                rounds=1,
                positions={a: t for a, t in history[-1].items() if t},
                **j.outcome_fields(),
            )

        return judged

    monkeypatch.setattr(plans, "protocol_fn", protocol)


@pytest.mark.parametrize("session_id", [JUDGED, PERSUADED])
def test_an_old_result_reads_and_writes_back_byte_for_byte(session_id: str) -> None:
    text = (SESSIONS / session_id / "result.json").read_text(encoding="utf-8")
    result = Result.read(text)
    assert result.finding is None and not result.claims and not result.verdicts
    assert result.to_json() == text


def test_an_old_session_still_shows(capsys: pytest.CaptureFixture[str], isolated: Path) -> None:
    old_session(isolated, JUDGED)
    code, out, err = moot(capsys, "show", JUDGED)
    assert code == 0, err
    assert "Agent C judged consensus in round 1" in out


def test_replay_names_the_rule_when_the_label_changes(
    capsys: pytest.CaptureFixture[str], isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = old_session(isolated, JUDGED)
    on_the_finding(monkeypatch)
    report = api.replay(JUDGED)
    assert report.identical is False
    assert report.changed is not None
    assert report.changed.startswith(
        "outcome changed: the stored result was labelled consensus (Agent C judged consensus "
        "in round 1 (score 10/10)); under moot's finding (labels are decided from the agents' "
        "final answers) it is no_consensus: Agent C called it consensus"
    )
    assert report.changed.endswith("the final answers differ: 408 (A); 418 (B); 400 (C)")
    code, out, _ = moot(capsys, "replay", JUDGED)
    assert code == 0, out  # explained: the journal verifies and the result was not edited
    assert "Outcome changed: the stored result was labelled consensus" in out
    assert "it is no_consensus: Agent C called it consensus" in out
    assert "not corruption" in out and "DIFFERENT" not in out
    stored = json.loads((folder / "result.json").read_text())
    assert "finding" not in stored  # replay reads; it never rewrites


def test_replay_of_an_edited_old_result_is_still_a_mismatch(
    capsys: pytest.CaptureFixture[str], isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = old_session(isolated, JUDGED)
    result = folder / "result.json"
    result.write_text(result.read_text().replace("The answer is 418.", "The answer is 408."))
    on_the_finding(monkeypatch)
    assert api.replay(JUDGED).changed is None
    code, out, _ = moot(capsys, "replay", JUDGED)
    assert code == 1 and "DIFFERENT" in out and "Outcome changed" not in out


def test_replay_of_a_result_that_already_carries_a_finding_compares_bytes(
    capsys: pytest.CaptureFixture[str], isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result written with a finding that the replay no longer gives is a mismatch: the
    rule only explains results written before it."""
    folder = old_session(isolated, JUDGED)
    on_the_finding(monkeypatch)
    api.resume(JUDGED)  # a finished session: result.json is rewritten from the replay
    stored = json.loads((folder / "result.json").read_text())
    assert stored["finding"]["label"] == "no_consensus"
    assert stored["verdicts"][0]["upheld"] is False
    code, out, _ = moot(capsys, "replay", JUDGED)
    assert code == 0 and "byte for byte" in out
    replayed = api.replay(JUDGED).result
    assert replayed.finding is not None
    other = replace(replayed, finding=replace(replayed.finding, reason="another reason"))
    journal, _ = Journal.open(folder / "events.jsonl", repair=False)
    stored_text = (folder / "result.json").read_text()
    assert api.outcome_change(SessionFolder(folder), journal, stored_text, other) is None


def test_replaying_with_changed_prompts_writes_nothing_and_show_still_works(
    capsys: pytest.CaptureFixture[str], isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Newer code asks with other prompts than an old session recorded: the replay keeps the
    recorded answers and says so, but journals nothing (a replay is read-only), so the stored
    result still matches its journal and `moot show` still shows it."""
    folder = old_session(isolated, JUDGED)
    before = (folder / "events.jsonl").read_bytes()
    monkeypatch.setattr(requests_module, "request_hash", lambda request: "another prompt")
    code, out, err = moot(capsys, "replay", JUDGED)
    assert code == 0, out
    assert (folder / "events.jsonl").read_bytes() == before
    code, out, err = moot(capsys, "show", JUDGED)
    assert code == 0, err
    assert "Agent C judged consensus in round 1" in out


def going_on(plan: Plan) -> Any:
    """A protocol that does not stop at a judge's CONSENSUS that moot's check does not bear out
    (as the arena on the finding): after the recorded rounds it asks for a step of round 2,
    which the old journal never held."""

    async def protocol(s: Session) -> Outcome:
        agents = sorted(a for a in s.aliases if a.startswith("agent_"))
        await recorded_answers(s, agents)
        go_on = [Message(role="user", content="evaluate again")]
        await s.ask("agent_a", go_on, step="r2/evaluate/agent_a")
        raise AssertionError("a replay cannot get here")

    return protocol


def test_a_session_that_today_s_code_would_not_have_ended_replays_as_a_changed_outcome(
    capsys: pytest.CaptureFixture[str], isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = old_session(isolated, JUDGED)
    monkeypatch.setattr(plans, "protocol_fn", going_on)
    code, out, _ = moot(capsys, "replay", JUDGED)
    assert code == 0, out
    assert (
        "Outcome changed: the stored result was labelled consensus (Agent C judged consensus in "
        "round 1 (score 10/10)); under moot's finding (labels are decided from the agents' "
        "final answers) it is no_consensus: the final answers differ: 408 (A); 418 (B); 400 (C). "
        "Today's code would not have ended the session there (it asks for r2/evaluate/agent_a, "
        "an ask the journal never recorded)"
    ) in out
    assert "DIFFERENT" not in out and "never finished" not in out
    # resume rewrites result.json under the rule; show renders it; replay now matches it
    code, out, _ = moot(capsys, "resume", JUDGED)
    assert code == 2, out
    stored = json.loads((folder / "result.json").read_text())
    assert stored["finding"]["label"] == "no_consensus" and stored["final_answer"] == ""
    assert [(c["agent"], c["round"], c["claim"]) for c in stored["claims"]] == [
        ("agent_a", 1, "408"),
        ("agent_b", 1, "418"),
        ("agent_c", 1, "400"),
    ]
    code, out, _ = moot(capsys, "show", JUDGED)
    assert code == 0 and "**No consensus: the final answers differ: 408 (A); 418 (B)" in out
    code, out, _ = moot(capsys, "replay", JUDGED)
    assert code == 0 and "byte for byte" in out


def test_a_session_that_never_finished_is_still_refused(
    capsys: pytest.CaptureFixture[str], isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = old_session(isolated, JUDGED)
    events = (folder / "events.jsonl").read_text().splitlines(keepends=True)
    (folder / "events.jsonl").write_text("".join(events[:-1]))  # the finished event is gone
    last = json.loads(events[-2])  # and its head sealed where a crash would have left it
    write_head(folder / "head.json", Head(len(events) - 1, last["hash"], False), None)
    monkeypatch.setattr(plans, "protocol_fn", going_on)
    code, _, err = moot(capsys, "replay", JUDGED)
    assert code == 1 and "never finished" in err
    assert "needs r2/evaluate/agent_a (an ask the journal never recorded)" in err


def test_the_arena_replays_old_sessions_under_the_rule(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    """The arena itself, on the finding, replaying the sessions the code before it wrote: the
    persuaded one is labelled persuasion; the judged one, which today's arena would not have
    ended at the judge's CONSENSUS, gets the finding over its final answers."""
    old_session(isolated, PERSUADED)
    old_session(isolated, JUDGED)
    code, out, _ = moot(capsys, "replay", PERSUADED)
    assert code == 0, out
    assert (
        "Outcome changed: the stored result was labelled consensus (Agent C judged consensus in "
        "round 1 (score 9/10)); under moot's finding (labels are decided from the agents' final "
        "answers) it is persuasion: converged by persuasion: 3 of 3 agents end on '408'"
    ) in out
    code, out, _ = moot(capsys, "replay", JUDGED)
    assert code == 0, out
    assert "it is no_consensus: the final answers differ: 408 (A); 418 (B); 400 (C)" in out
    assert "Today's code would not have ended the session there" in out
    code, out, _ = moot(capsys, "show", JUDGED)  # the stored result still shows
    assert code == 0 and "Agent C judged consensus in round 1" in out


def test_a_replay_that_only_adds_the_finding_is_a_changed_outcome_too(
    capsys: pytest.CaptureFixture[str], isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The label stays consensus (the final answers agree); the replay's only difference is the
    typed outcome the stored result lacks: a changed outcome of the same rule, not a mismatch."""
    old_session(isolated, PERSUADED)
    on_the_finding(monkeypatch, final_only=True)
    report = api.replay(PERSUADED)
    assert report.identical is False and report.result.status == "consensus"
    assert report.changed == (
        "outcome changed: the stored result (consensus) was written before moot's finding "
        "(labels are decided from the agents' final answers); the replay adds the finding, "
        "consensus: 3 of 3 agents' final answers agree on '408' (Agent A, Agent B and Agent C), "
        "by moot's check"
    )
    code, out, _ = moot(capsys, "replay", PERSUADED)
    assert code == 0 and "Outcome changed: the stored result (consensus)" in out
    assert "DIFFERENT" not in out


def test_migrating_a_format_0_session_from_before_the_finding_names_the_rule(
    capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    """An older folder still: migrated, its replay under today's arena differs from its stored
    result only as the rule explains, so the migration succeeds and says so."""
    folder = old_session(isolated, PERSUADED)
    make_v0(folder)
    code, out, _ = moot(capsys, "migrate", PERSUADED)
    assert code == 0, out
    assert "format version 0 -> 1" in out
    assert "Outcome changed: the stored result was labelled consensus" in out
    assert "it is persuasion: converged by persuasion" in out and "NOT" not in out
    code, out, _ = moot(capsys, "show", PERSUADED)
    assert code == 0 and "Agent C judged consensus in round 1" in out
