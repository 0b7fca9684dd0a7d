"""An arena run on a question that asks for a yes or no certifies no answer that says neither (a
new user's `moot run 'Is 91 a prime number? Answer yes or no.' --rounds 2` ended in a consensus,
exit 0, on "91: 03/24/2023 8:57 PM", "converged by persuasion"): such an answer is asked again,
then invalid, and never counted among a consensus's supporters."""

from __future__ import annotations

from moot import api
from tests.protocols.arena.test_arena_finding import said
from tests.scripts import Debate, start, verdict

PRIME = "Is 91 a prime number? Answer yes or no."
FIELD = "91: 03/24/2023 8:57 PM"


def _run(answers: dict[str, str]) -> tuple[Debate, api.RunResult]:
    """One round on PRIME, each agent's final answer as given, the judge saying CONSENSUS."""
    debate = Debate(
        answer=lambda alias, step: said(answers[alias], work="Looked at 91."),
        verdicts=[verdict("CONSENSUS", 9)],
    )
    return debate, start(PRIME, debate.config(arena={"max_rounds": 1}))


def test_answers_that_say_neither_yes_nor_no_are_no_consensus() -> None:
    debate, run = _run({"agent_a": FIELD, "agent_b": FIELD, "agent_c": "The number 91."})
    assert run.exit_code == 2 and run.result.status == "no_consensus", run.message
    found = run.result.finding
    assert found is not None and found.label == "no_consensus"
    assert not any(c.valid for c in run.result.claims)
    # each was asked again, quoting why, before it was held invalid
    reasks = [r for r in debate.requests if r.meta["step"].endswith("/reask")]
    assert reasks and all("says neither yes nor no" in r.prompt for r in reasks)
    # (the same reply to the re-ask, which quotes it, is an echo of that prompt by then)
    assert "Agent A gave an invalid answer" in run.result.trust, run.result.trust
    assert api.replay(run.session_id).identical is True


def test_one_agent_that_says_neither_does_not_count_for_a_consensus() -> None:
    _, run = _run({"agent_a": "No — 91 = 7 x 13.", "agent_b": "No.", "agent_c": FIELD})
    found = run.result.finding
    assert found is not None and found.label == "consensus", found
    assert found.agreed == ("agent_a", "agent_b")
    assert "Agent C gave an invalid answer" in run.result.trust, run.result.trust


def test_answers_that_say_no_reach_a_consensus() -> None:
    _, run = _run(
        {
            "agent_a": "No — 91 = 7 x 13.",
            "agent_b": "91 is not a prime; it is 7*13.",
            "agent_c": "No.",
        }
    )
    assert run.exit_code == 0, run.message
    found = run.result.finding
    assert found is not None and found.label == "consensus", found
    assert all(c.valid for c in run.result.claims)
