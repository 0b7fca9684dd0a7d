"""The vote's counts are moot's finding: a sample the finding holds to be no answer (a bare
number to a yes/no question, an answer that only repeats the question) is "invalid" with its
reason in the round record, the samples, the trust statement, the reports and the terminal.
Seen on the embedded model: "Is 7 a prime number?" answered '6' three times ended "none of the 3
answers asked was a valid answer" beside `"valid": 3, "invalid": 0` and three "valid" samples,
and its report put "Round 0" claims under "### Round 1"."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from moot import api
from moot.config import RunConfig
from moot.engine.store import find_session
from moot.models.scripted import register_script
from moot.types import Request
from tests.cli.test_cli import moot
from tests.scripts import start

PRIME = "Is 7 a prime number?"
BARE = "its answer is a bare number to a yes/no question ('6')"


def voters(answer: Callable[[str, int], str], agents: int, samples: int = 1) -> RunConfig:
    def reply(request: Request) -> str:
        return answer(request.meta["agent"], int(request.meta["step"].rsplit("/", 1)[1]))

    register_script("counted-voter", reply)
    return RunConfig.read(
        {
            "protocol": "vote",
            "agents": [{"model": "scripted:@counted-voter"}] * agents,
            "seed": 5,
            "engine": {"attempts": 1},
            "vote": {"samples": samples},
        }
    )


def test_answers_the_finding_holds_no_answers_are_counted_invalid_everywhere() -> None:
    run = start(PRIME, voters(lambda a, k: "Let me think.\nAnswer: 6", agents=3))
    assert run.exit_code == 2
    assert run.result.how.startswith("none of the 3 answers asked was a valid answer")
    stored = json.loads((run.folder / "result.json").read_text())
    vote = stored["details"]["rounds"][0]
    assert (vote["valid"], vote["invalid"], vote["failed"]) == (0, 3, 0)
    samples = stored["details"]["samples"]
    assert [x["status"] for x in samples] == ["invalid"] * 3
    assert all(x["answer"] is None and x["problem"] == BARE for x in samples)
    assert all(x["reason"] == "no_answer" for x in samples)
    assert stored["positions"] == {}  # no final solution is shown for an answer that is none
    assert "3 of 3 answers were invalid: Agent A: " + BARE in stored["trust"]
    assert "3 of 3 answers invalid (Agent A, Agent B, Agent C)" in stored["how"]
    # the reports number the vote's one round as its step and its heading do: round 1
    report = (run.folder / "report.md").read_text()
    assert "| Agent | Round 1 |" in report and "Round 0" not in report
    assert f"- Agent A (round 1): invalid: {BARE}" in report
    assert "(round 0)" not in report
    assert "3 of 3 answers invalid" in report
    html = (run.folder / "report.html").read_text()
    assert "<th>Round 1</th>" in html and "Round 0" not in html and "(round 0)" not in html
    assert api.replay(run.session_id).identical is True


def test_a_sample_the_finding_holds_no_answer_beside_valid_ones_keeps_the_rest_valid() -> None:
    """One of six samples is a bare number: 5 of 6 agree on yes, 5 valid and 1 invalid, and the
    invalid one is named as the sample it is."""
    run = start(
        PRIME,
        voters(lambda a, k: "Answer: 6" if (a, k) == ("agent_b", 2) else "Answer: Yes", 2, 3),
    )
    assert run.exit_code == 0, run.result.how
    vote = run.result.details["rounds"][0]
    assert (vote["valid"], vote["invalid"], vote["answered"]) == (5, 1, 5)
    statuses = {x["step"]: x["status"] for x in run.result.details["samples"]}
    assert statuses.pop("r1/answer/agent_b/2") == "invalid"
    assert set(statuses.values()) == {"valid"}
    assert "1 of 6 answers was invalid: Agent B (answer 2): " + BARE in run.result.trust
    assert {(c.agent, c.round) for c in run.result.claims if not c.valid} == {("agent_b/2", 1)}
    assert api.replay(run.session_id).identical is True


def test_the_terminal_counts_what_the_finding_counts(capsys: pytest.CaptureFixture[str]) -> None:
    voters(lambda a, k: "Answer: 6", agents=2)
    code, out, err = moot(
        capsys, "run", PRIME, "--protocol", "vote",
        "--models", "scripted:@counted-voter", "--models", "scripted:@counted-voter",
    )  # fmt: skip
    assert code == 2, err
    assert "round 1: no valid answer" in err and "2 of 2 answers invalid" in err
    session = out.split("Session ", 1)[1].split(":", 1)[0]
    result = json.loads((find_session(session).path / "result.json").read_text())
    assert result["details"]["rounds"][0]["invalid"] == 2
