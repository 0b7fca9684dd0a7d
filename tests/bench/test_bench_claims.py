"""`moot bench` reads claims, not numbers out of JSON (issue 29): each question's sessions get
their own seed, a court "yes" vote counts as the position it supports, flips are computed on
claims, and the report states the calls each protocol and its baseline actually made.

`vote` and `steps` here are tiny protocols registered by this test, so the numbers do not depend
on the real protocols (other engineers change them); the court is the real one."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import pytest
from msgspec import Meta

from moot import protocols
from moot.bench.journals import agent_trajectories, answer_of, calls_made, position_of
from moot.bench.runner import BenchOptions, run_bench, session_seed
from moot.bench.suites import Question, arithmetic_suite, score_exact
from moot.config import Section
from moot.deliberation.consensus import position_id
from moot.engine.session import Session
from moot.models.scripted import register_script
from moot.protocols.definition import Conduct, Flag, ProtocolDefinition
from moot.types import Message, Outcome, Request, Step

_QUESTION = re.compile(r"What is the result of ([0-9+*\-]+)\?")


def _right(request: Request) -> int:
    for message in request.messages:
        found = _QUESTION.search(message.content)
        if found:
            return int(eval(found.group(1)))  # digits and + - * only: the regex allows no more
    raise AssertionError("the question is not in the request")


class VoteOptions(Section):
    samples: Annotated[int, Meta(ge=1, le=20)] = 1


async def vote(s: Session, task: str, opts: VoteOptions) -> Outcome:
    asks = [
        s.ask(a, [Message(role="user", content=task)], step=Step.at(0, f"sample{k}", a))
        for k in range(opts.samples)
        for a in s.aliases
    ]
    replies = await s.gather(*asks)
    best, count = Counter(answer_of(c.text) for c in replies if c.ok).most_common(1)[0]
    return Outcome(
        protocol="vote",
        status="consensus",
        consensus=True,
        how=f"{count} of {len(asks)} samples",
        final_answer=f"The answer is {best}.",
        rounds=1,
    )


class StepsOptions(Section):
    extra: Annotated[int, Meta(ge=0, le=5)] = 1


async def steps(s: Session, task: str, opts: StepsOptions) -> Outcome:
    """One answer per agent, then `extra` more asks of the first agent: 3 + extra calls."""
    aliases = sorted(s.aliases)
    first = await s.gather(
        *(s.ask(a, [Message(role="user", content=task)], step=Step.at(0, "a", a)) for a in aliases)
    )
    for k in range(opts.extra):
        await s.ask(aliases[0], [Message(role="user", content=task)], step=Step.at(1, f"x{k}"))
    return Outcome(
        protocol="steps",
        status="consensus",
        consensus=True,
        how="scripted",
        final_answer=first[0].text,
        rounds=1,
    )


VOTE = ProtocolDefinition(
    name="vote",
    summary="samples",
    options=VoteOptions,
    conduct=Conduct(vote),
    flags={Flag.SAMPLES: "samples"},
)
STEPS = ProtocolDefinition(
    name="steps", summary="3 + extra calls", options=StepsOptions, conduct=Conduct(steps)
)


def plain(request: Request) -> str:
    return f"The answer is {_right(request)}."


def court_agent(request: Request) -> str:
    """Proposes the right answer, then votes yes for the candidate with confidence 0.7."""
    step = request.meta["step"]
    candidate = re.search(r'has the id "([0-9a-f]{12})"', request.prompt)
    if "/vote/" in step and candidate:
        return json.dumps(
            {
                "vote": "yes",
                "targetPositionId": candidate.group(1),
                "reasoning": "It holds up, I am 0.7 sure.",
                "confidence": 0.7,
            }
        )
    return json.dumps(
        {
            "vote": "abstain",
            "newPositionText": f"The answer is {_right(request)}.",
            "reasoning": "Computed step by step.",
            "confidence": 0.7,
        }
    )


@pytest.fixture(autouse=True)
def scripted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    for name in ("one", "two", "three"):
        register_script(f"claims-{name}", plain)
        register_script(f"court-{name}", court_agent)
    protocols.register(VOTE)
    protocols.register(STEPS)
    yield
    protocols.unregister("vote")
    protocols.unregister("steps")


def _sessions(tmp_path: Path) -> list[dict[str, object]]:
    root = tmp_path / "home" / "sessions"
    return [json.loads((p / "session.json").read_text()) for p in sorted(root.iterdir())]


def test_session_seed_is_a_stable_hash_of_the_bench_seed_and_the_question() -> None:
    assert session_seed(0, "What is 2+2?") == session_seed(0, "What is 2+2?")
    assert session_seed(0, "What is 2+2?") != session_seed(0, "What is 2+3?")
    assert session_seed(0, "What is 2+2?") != session_seed(1, "What is 2+2?")
    # stable across processes and versions: not Python's salted hash()
    assert session_seed(0, "What is 2+2?") == 234_070_125
    assert all(0 <= session_seed(s, "q") < 2**31 for s in range(50))


def test_each_question_runs_with_its_own_seed_so_alias_maps_vary(tmp_path: Path) -> None:
    models = [f"scripted:@claims-{n}" for n in ("one", "two", "three")]
    options = BenchOptions(suite="arithmetic", protocols=["steps"], models=models, n=8, seed=5)
    report = run_bench(options, out=tmp_path / "out")
    questions = {q.question: q for q in arithmetic_suite(8, seed=5).questions}
    metas = _sessions(tmp_path)
    assert len(metas) == 16  # steps and its vote baseline, 8 questions each
    for meta in metas:
        assert meta["seed"] == session_seed(5, str(meta["task"]))
        assert meta["task"] in questions
    seeds = {meta["seed"] for meta in metas}
    assert len(seeds) == 8  # one per question, shared by a protocol and its baseline
    maps = {json.dumps(meta["aliases"], sort_keys=True) for meta in metas}
    assert len(maps) > 1, "every question had the same alias map"
    assert report.rows[0].accuracy == 1.0


def test_the_report_states_the_calls_each_protocol_and_its_baseline_made(tmp_path: Path) -> None:
    models = [f"scripted:@claims-{n}" for n in ("one", "two", "three")]
    options = BenchOptions(suite="arithmetic", protocols=["steps"], models=models, n=4)
    report = run_bench(options, out=tmp_path / "out")
    rows = {row["name"]: row for row in report.data["protocols"]}
    steps_row, base = rows["steps"], rows["vote (samples=1)"]
    assert steps_row["calls"] == 16 and base["calls"] == 12  # exact, from the journals
    assert steps_row["comparison"]["calls"] == 16
    assert steps_row["comparison"]["baseline_calls"] == 12
    assert steps_row["comparison"]["equal_calls"] is False
    assert (
        "Calls made: steps 16 (4.0 per question), vote (samples=1) 12 (3.0 per question): "
        "approximately equal calls (the baseline made 25% fewer)." in report.markdown
    )
    assert "at an equal number of calls" not in report.markdown
    for q in steps_row["per_question"]:
        folder = tmp_path / "home" / "sessions" / q["session"]
        assert calls_made(folder) == q["calls"] == 4


def test_equal_calls_are_said_to_be_equal(tmp_path: Path) -> None:
    models = [f"scripted:@claims-{n}" for n in ("one", "two", "three")]
    options = BenchOptions(
        suite="arithmetic",
        protocols=["steps"],
        models=models,
        n=2,
        config_path=_config(tmp_path, "[steps]\nextra = 3\n"),
    )
    report = run_bench(options, out=tmp_path / "out")
    assert "steps 12 (6.0 per question), vote (samples=2) 12 (6.0 per question): equal calls." in (
        report.markdown
    )


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "moot.toml"
    path.write_text(text)
    return path


def test_a_court_that_scored_every_question_shows_no_negative_flips(tmp_path: Path) -> None:
    """Issue 29: court "yes" votes were read as the answer "0.7" (their confidence), so a court
    that was right every time showed right -> wrong flips on every agent."""
    models = [f"scripted:@court-{n}" for n in ("one", "two", "three")]
    options = BenchOptions(suite="arithmetic", protocols=["court"], models=models, n=3)
    report = run_bench(options, out=tmp_path / "out")
    court = next(row for row in report.rows if row.name == "court")
    assert court.accuracy == 1.0
    assert court.flips, "the court's agents answered in two rounds"
    assert sum(f.correct_to_wrong for f in court.flips) == 0
    assert sum(f.wrong_to_correct for f in court.flips) == 0
    assert sum(f.stayed_correct for f in court.flips) == 9  # 3 agents x 3 questions


def test_a_yes_vote_stands_for_the_candidate_position() -> None:
    text = "The answer is 14."
    pid = position_id(text)
    yes = json.dumps({"vote": "yes", "targetPositionId": pid, "confidence": 0.7})
    assert position_of(yes, positions={pid: text}, protocol="court") == text
    prompt = (
        f'has the id "{pid}":\n\n<quoted from="candidate position {pid}" id="n1">\n{text}\n'
        '</quoted id="n1">\n'
    )
    assert position_of(yes, prompt, protocol="court") == text
    no = json.dumps({"vote": "no", "newPositionText": "It is 15.", "confidence": 0.9})
    assert position_of(no, protocol="court") == "It is 15."
    abstain = json.dumps({"vote": "abstain", "confidence": 1.0})
    assert position_of(abstain, protocol="court") == ""
    assert answer_of(position_of(yes, prompt, protocol="court")) == "14"
    # the court reads its votes (its record's `stands_for`); other replies are read as text
    assert position_of("<solution>\nIt is 14.\n</solution>", protocol="court") == "\nIt is 14.\n"


def test_a_court_journal_without_claims_is_read_as_the_votes(tmp_path: Path) -> None:
    """A session whose result.json has no claims (from before moot's finding) is read from its
    journal, each reply as its protocol reads it (the begin event names the protocol)."""
    text, other = "The answer is 14.", "The answer is 15."
    pid = position_id(text)
    propose = [json.dumps({"vote": "abstain", "newPositionText": t}) for t in (text, other)]
    yes = json.dumps({"vote": "yes", "targetPositionId": pid, "confidence": 0.7})
    no = json.dumps({"vote": "no", "newPositionText": other, "confidence": 0.7})

    def ask(round_: int, agent: str, reply: str) -> dict[str, object]:
        data = {"agent": agent, "prompt": "vote", "completion": {"status": "ok", "text": reply}}
        return {"kind": "ask", "step": Step.at(round_, "vote", agent), "data": data}

    events = [
        {"kind": "begin", "data": {"protocol": "court"}},
        ask(1, "agent_a", propose[0]),
        ask(1, "agent_b", propose[1]),
        ask(2, "agent_a", no),
        ask(2, "agent_b", yes),
    ]
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    assert agent_trajectories(tmp_path) == {"agent_a": ["14", "15"], "agent_b": ["15", "14"]}


def test_claims_in_result_json_are_the_trajectories(tmp_path: Path) -> None:
    claims = [
        {"agent": "agent_a", "round": 0, "claim": "408", "valid": True},
        {"agent": "agent_a", "round": 1, "claim": "So the answer is 418.", "valid": True},
        {"agent": "agent_b", "round": 0, "claim": "You are an AI", "valid": False},
        {"agent": "agent_b", "round": 1, "claim": "408", "valid": True},
    ]
    (tmp_path / "result.json").write_text(json.dumps({"claims": claims}))
    (tmp_path / "events.jsonl").write_text("")
    assert agent_trajectories(tmp_path) == {"agent_a": ["408", "418"], "agent_b": [None, "408"]}


def test_exact_scoring_uses_the_claims_relation() -> None:
    assert score_exact("The capital of France is Paris.", "Paris")
    assert not score_exact("Lyon", "Paris")
    assert not score_exact("The migration is not safe.", "The migration is safe.")
    assert not score_exact("", "Paris") and not score_exact(None, "Paris")
    assert Question("q", "Capital of France?", "Paris").score("It is Paris.")
