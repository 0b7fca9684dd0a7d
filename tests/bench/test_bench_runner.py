"""`moot bench` end to end with scripted agents whose behaviour each test sets: a suite where
the debate (arena) is known to win, one where vote wins, one where they do equally well; each
question an ordinary session, vote run at the arena's number of calls, the plain sentence, the
flips per round read from the arena's journals, and the three report files.

`vote` here is a tiny baseline protocol registered by this test (each agent answers `samples`
times, the most common extracted answer wins), so the test does not depend on the real one."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from msgspec import Meta

from moot import protocols
from moot.bench.journals import answer_of
from moot.bench.runner import BenchOptions, run_bench
from moot.config import Section
from moot.engine.session import Session
from moot.models.scripted import register_script
from moot.protocols.definition import Conduct, Flag, ProtocolDefinition
from moot.types import Message, Outcome, Request, Step
from tests.cli.test_cli import moot

QUESTIONS = 10


class VoteOptions(Section):
    samples: Annotated[int, Meta(ge=1, le=20)] = 1


async def vote(s: Session, task: str, opts: VoteOptions) -> Outcome:
    asks = [
        s.ask(a, [Message(role="user", content=task)], step=Step.at(0, f"sample{k}", a))
        for k in range(opts.samples)
        for a in s.aliases
    ]
    replies = await s.gather(*asks)
    answers = Counter(answer_of(c.text) for c in replies if c.ok)
    best, count = answers.most_common(1)[0]
    return Outcome(
        protocol="vote",
        status="consensus",
        consensus=True,
        how=f"{count} of {len(asks)} samples",
        final_answer=f"The answer is {best}.",
        rounds=1,
    )


VOTE = ProtocolDefinition(
    name="vote",
    summary="majority of samples",
    options=VoteOptions,
    conduct=Conduct(vote),
    flags={Flag.SAMPLES: "samples"},
)

# What the scripted agents do, set by each test: "debate" (every first answer is wrong, the
# revised ones right; vote's samples are wrong), "vote" (one first answer is right, every revised
# one wrong; vote is right), "same" (the revised answers and vote's are right).
MODE = {"winner": "same"}
_QUESTION = re.compile(r"What is the result of ([0-9+*\-]+)\?")


def _right(request: Request) -> int:
    for message in request.messages:
        found = _QUESTION.search(message.content)
        if found:
            return int(eval(found.group(1)))  # digits and + - * only: the regex allows no more
    raise AssertionError("the question is not in the request")


def _solution(value: int) -> str:
    text = f"The answer is {value}."
    return (
        f"<solution>\n## PLAN\n1. compute\n## CHANGES\n{text}\n</solution>\n"
        "<analysis>\n## RISKS\nnone\n## DISAGREEMENTS\nNone.\n</analysis>"
    )


def agent(request: Request) -> str:
    step = Step.parse(request.meta["step"])
    phase, winner = str(step.phase), MODE["winner"]
    offset = {"agent_a": 0, "agent_b": 1, "agent_c": 2}[request.meta["agent"]]
    if phase.startswith("sample"):
        return f"The answer is {_right(request) + (winner == 'debate')}."
    if phase == "solve":  # the agents disagree at first, else the debate would end at once
        return _solution(_right(request) + offset + (winner == "debate"))
    if phase == "revise":
        return _solution(_right(request) + (winner == "vote"))
    if phase == "evaluate":
        return "Strengths: clear. Weaknesses: none. Errors: none."
    return (
        "AGREEMENT POINTS: all.\n<verdict>\ndecision: CONSENSUS\nconvergence_score: 9\n"
        "remaining_disagreements: 0\nbase_solution: Agent A\nmodifications: none\n</verdict>"
    )


MODELS = ["scripted:@bench-agent"] * 3


@pytest.fixture(autouse=True)
def scripted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    register_script("bench-agent", agent)
    protocols.register(VOTE)
    yield
    protocols.unregister("vote")


def _asks(tmp_path: Path, row: dict[str, Any]) -> int:
    """The ask events in the journals of a row's sessions."""
    root = tmp_path / "home" / "sessions"
    return sum(
        sum(
            json.loads(line)["kind"] == "ask"
            for line in (root / q["session"] / "events.jsonl").read_text().splitlines()
        )
        for q in row["per_question"]
    )


def bench(tmp_path: Path, winner: str) -> dict[str, Any]:
    MODE["winner"] = winner
    options = BenchOptions(suite="arithmetic", protocols=["arena"], models=MODELS, n=QUESTIONS)
    report = run_bench(options, out=tmp_path / "out")
    data = json.loads((tmp_path / "out" / "bench.json").read_text())
    assert data == report.data
    return {row["name"]: row for row in data["protocols"]}


def test_a_debate_that_repairs_answers_beats_vote_at_equal_calls(tmp_path: Path) -> None:
    rows = bench(tmp_path, "debate")
    arena, baseline = rows["arena"], rows["vote (samples=3)"]
    assert arena["accuracy"] == 1.0 and baseline["accuracy"] == 0.0
    # the calls each made, counted in their journals: the arena's depend on when it stops
    # (after an agreeing revision, or after the judge's verify), vote's are 3 samples x 3 agents
    assert arena["calls"] == _asks(tmp_path, arena) and arena["calls"] in range(9, 10 * 10 + 1)
    assert baseline["calls_per_question"] == 9 and baseline["calls"] == _asks(tmp_path, baseline)
    assert arena["comparison"]["direction"] == "better"
    assert arena["comparison"]["sentence"].startswith("arena is better than vote (samples=3)")
    # every agent went from wrong (round 0) to right (round 1): 3 x 10 flips
    assert arena["flips"] == [
        {
            "round": 1,
            "correct_to_wrong": 0,
            "wrong_to_correct": 30,
            "stayed_correct": 0,
            "stayed_wrong": 0,
        }
    ]
    assert baseline["flips"] == []
    assert arena["interval_95"][0] > 0.6  # Wilson, 10 of 10
    assert all(q["session"] for q in arena["per_question"])


def test_a_debate_that_talks_itself_out_of_right_answers_loses_to_vote(tmp_path: Path) -> None:
    rows = bench(tmp_path, "vote")
    arena = rows["arena"]
    assert arena["accuracy"] == 0.0 and rows["vote (samples=3)"]["accuracy"] == 1.0
    assert arena["comparison"]["direction"] == "worse"
    assert arena["comparison"]["p_value"] == pytest.approx(2 / 2**10)
    # agent A's right first answer went wrong in each question; the others stayed wrong
    assert arena["flips"][0]["correct_to_wrong"] == 10
    assert arena["flips"][0]["stayed_wrong"] == 20


def test_no_difference_is_said_plainly_and_the_reports_are_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    MODE["winner"] = "same"
    args = ["bench", "--suite", "arithmetic", "--protocols", "arena", "--n", "6"]
    for spec in MODELS:
        args += ["--models", spec]
    code, out, err = moot(capsys, *args, "--out", str(tmp_path / "out"))
    assert code == 0, err
    assert "arena shows no measurable gain over vote (samples=3) (100.0% against 100.0%" in out
    assert "only prove the plumbing" in out
    assert "scripted:@bench-agent" in out
    page = (tmp_path / "out" / "report.html").read_text()
    assert page.count("<svg") == 2 and "<script" not in page
    assert "Accuracy with 95% interval" in page and "Accuracy against cost per question" in page
    assert (tmp_path / "out" / "report.md").read_text() in out
    data = json.loads((tmp_path / "out" / "bench.json").read_text())
    assert [row["name"] for row in data["protocols"]] == ["arena", "vote (samples=3)"]
    assert data["questions"] == 6 and data["models"] == ["scripted:@bench-agent"]
    # every question is an ordinary session
    sessions = {q["session"] for row in data["protocols"] for q in row["per_question"]}
    folders = {p.name for p in (tmp_path / "home" / "sessions").iterdir()}
    assert sessions == folders and len(folders) == 12
