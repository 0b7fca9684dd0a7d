"""moot's finding: consensus needs more than half of all agents that started agreeing by moot's
check; a model's verdict is evidence; persuasion is told apart from independent agreement."""

from __future__ import annotations

import pytest

from moot.deliberation.finding import judge_answers, majority
from moot.types import ModelVerdict

ABC = ["agent_a", "agent_b", "agent_c"]


def judge(says: str = "called it consensus (10/10)", *, agrees: bool = True) -> ModelVerdict:
    return ModelVerdict(by="Agent B", role="judge", says=says, claims_agreement=agrees)


def test_majority_is_more_than_half() -> None:
    assert not majority(2, 4)
    assert majority(3, 4)
    assert majority(2, 3)
    assert not majority(1, 2)
    assert not majority(0, 0)


def test_a_judges_consensus_over_differing_numbers_is_not_consensus() -> None:
    j = judge_answers(
        [{"agent_a": "408", "agent_b": "418", "agent_c": "400"}], started=ABC, verdicts=[judge()]
    )
    assert not j.consensus
    assert j.finding.label == "no_consensus"
    assert j.finding.reason == (
        "Agent B called it consensus (10/10); the final answers differ: 408 (A); 418 (B); 400 (C)"
    )
    assert j.verdicts[0].upheld is False
    assert "does not bear it out" in " ".join(j.sentences())


def test_a_judge_confirms_what_the_wording_cannot_but_never_a_contradiction() -> None:
    unsure = {
        "agent_a": "Shorter wavelengths scatter more strongly off the molecules of the air.",
        "agent_b": "Blue light is bent and spread around by gas in the atmosphere more than red.",
        "agent_c": "Longer wavelengths scatter more strongly off the molecules of the air.",
    }
    alone = judge_answers([unsure], started=ABC)
    assert not alone.consensus
    confirmed = judge_answers([unsure], started=ABC, verdicts=[judge()])
    assert confirmed.consensus
    assert confirmed.finding.confirmed_by == "Agent B"
    assert confirmed.finding.agreed == ("agent_a", "agent_b")
    contradicted = judge_answers(
        [{"agent_a": "It is safe.", "agent_b": "It is not safe.", "agent_c": "Not safe."}],
        started=ABC,
        verdicts=[judge()],
    )
    assert contradicted.finding.agreed == ("agent_b", "agent_c")


def test_paraphrases_make_a_consensus_without_any_judge() -> None:
    j = judge_answers(
        [{"agent_a": "Paris", "agent_b": "It's Paris.", "agent_c": "The capital is Paris."}],
        started=ABC,
    )
    assert j.finding.label == "consensus"
    assert j.finding.claim == "Paris"
    assert j.finding.agreed == tuple(ABC)


def test_two_of_four_is_a_tie_not_a_majority() -> None:
    four = [*ABC, "agent_d"]
    j = judge_answers(
        [{"agent_a": "408", "agent_b": "418", "agent_c": "408", "agent_d": "418"}], started=four
    )
    assert j.finding.label == "tie"
    assert j.finding.claim is None
    assert j.finding.reason == "a tie: '408' (A, C) against '418' (B, D)"


def test_failed_agents_count_against_the_majority() -> None:
    j = judge_answers([{"agent_a": "Paris", "agent_b": None}], started=[*ABC, "agent_d"])
    assert not j.consensus
    assert j.finding.valid == 1
    assert j.finding.reason.startswith("only 1 of 4 agents gave a valid answer")
    rows = {(c.agent, c.valid) for c in j.claims}
    assert ("agent_b", False) in rows


def test_agreement_reached_by_giving_up_answers_is_persuasion() -> None:
    j = judge_answers(
        [
            {"agent_a": "408", "agent_b": "418", "agent_c": "418"},
            {"agent_a": "408", "agent_b": "408", "agent_c": "408"},
        ],
        started=ABC,
    )
    assert j.consensus
    assert j.finding.label == "persuasion"
    assert j.finding.independent == 1
    assert "Agent B and Agent C moved from '418' to '408' in round 1 after Agent A's critique" in (
        j.finding.reason
    )
    assert [(c.agent, c.round, c.toward) for c in j.changes] == [
        ("agent_b", 1, ("agent_a",)),
        ("agent_c", 1, ("agent_a",)),
    ]


def test_an_independent_majority_is_consensus_even_if_one_agent_moved() -> None:
    j = judge_answers(
        [
            {"agent_a": "408", "agent_b": "408", "agent_c": "418"},
            {"agent_a": "408", "agent_b": "408", "agent_c": "408"},
        ],
        started=ABC,
        critics={("agent_c", 1): ["agent_a", "agent_b"]},
    )
    assert j.finding.label == "consensus"
    assert j.finding.independent == 2
    (change,) = j.changes
    assert change.critics == ("agent_a", "agent_b")


def test_rewording_is_not_a_change_of_mind() -> None:
    j = judge_answers(
        [
            {"agent_a": "Paris", "agent_b": "Paris"},
            {"agent_a": "The capital is Paris.", "agent_b": "It's Paris."},
        ],
        started=["agent_a", "agent_b"],
    )
    assert j.changes == ()
    assert j.finding.label == "consensus"


def test_an_invalid_verdict_is_named_and_weighs_nothing() -> None:
    bad = ModelVerdict(
        by="Judge A",
        role="judge",
        says="called it consensus",
        claims_agreement=True,
        valid=False,
        problem="it says CONSENSUS and lists 23 remaining disagreements",
    )
    unsure = {
        "agent_a": "Shorter wavelengths scatter more strongly off the molecules of the air.",
        "agent_b": "Blue light is bent and spread around by gas in the atmosphere more than red.",
    }
    j = judge_answers([unsure], started=["agent_a", "agent_b"], verdicts=[bad])
    assert not j.consensus
    assert "Judge A's verdict was invalid" in " ".join(j.sentences())


def test_no_agents_is_a_caller_error() -> None:
    with pytest.raises(ValueError, match="no agents started"):
        judge_answers([{}], started=[])


def test_a_judge_that_denies_agreement_moot_finds_is_named_too() -> None:
    j = judge_answers(
        [{"agent_a": "Paris", "agent_b": "It's Paris."}],
        started=["agent_a", "agent_b"],
        verdicts=[judge("scored the convergence 3/10", agrees=False)],
    )
    assert j.consensus
    assert j.verdicts[0].upheld is False
    assert (
        "Agent B scored the convergence 3/10, but moot's check finds the final answers agree."
        in (j.sentences())
    )


def test_answers_a_judge_confirmed_from_the_start_are_independent_not_persuaded() -> None:
    plans = {
        "agent_a": "Shorter wavelengths scatter more strongly off the molecules of the air.",
        "agent_b": "Blue light is bent and spread around by gas in the atmosphere more than red.",
        "agent_c": "Air molecules scatter the short blue wavelengths of sunlight the most.",
    }
    j = judge_answers([plans, plans], started=ABC, verdicts=[judge()])
    assert j.finding.label == "consensus"
    assert j.finding.independent == 3
    assert j.changes == ()
