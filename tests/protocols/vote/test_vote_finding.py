"""The vote's label is moot's finding (issue 29): answers are grouped by the one agreement
relation, not by string similarity; a majority is more than half of every answer asked; a tie
names no answer; the outcome carries the finding and each sample's claim."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moot.config import RunConfig, dump, read
from moot.lifecycle.plan import resolve
from moot.models.scripted import register_script
from moot.protocols.vote.options import VoteOptions
from moot.protocols.vote.run import describe_round, judge_samples
from moot.text.rounds import round_result
from moot.types import Request
from tests.scripts import start

TASK = "Is it safe to run the migration on Friday?"


def voters(answers: dict[str, str] | Callable[[str, int], str], **vote: object) -> RunConfig:
    """A vote whose agent `agent_x` answers `answers[agent_x]` (or `answers(alias, k)`)."""
    count = len(answers) if isinstance(answers, dict) else int(str(vote.pop("agents")))

    def reply(request: Request) -> str:
        alias, k = request.meta["agent"], int(request.meta["step"].rsplit("/", 1)[1])
        return answers[alias] if isinstance(answers, dict) else answers(alias, k)

    register_script("finding-voter", reply)
    return RunConfig.read(
        {
            "protocol": "vote",
            "agents": [{"model": "scripted:@finding-voter"}] * count,
            "seed": 4,
            "engine": {"attempts": 1},
            "vote": vote,
        }
    )


def test_safe_and_not_safe_are_two_groups_and_the_majority_speaks_in_its_own_words() -> None:
    """Grouped by similarity, one "safe" and two "not safe" were 3 of 3 (100%) for the
    minority's wording."""
    run = start(
        TASK,
        voters(
            {
                "agent_a": "Answer: The migration is safe to run on Friday.",
                "agent_b": "Answer: The migration is not safe to run on Friday.",
                "agent_c": "Answer: The migration is not safe to run on Friday.",
            }
        ),
    )
    vote = run.result.details["rounds"][0]
    assert vote["distribution"] == {
        "The migration is not safe to run on Friday.": 2,
        "The migration is safe to run on Friday.": 1,
    }
    assert run.exit_code == 0 and run.result.status == "consensus"
    assert run.result.final_answer == "The migration is not safe to run on Friday."
    assert "2 of the 3 answers asked agree" in run.result.how
    finding = run.result.finding
    assert finding is not None and finding.label == "consensus"
    assert finding.agreed == ("agent_b", "agent_c")


def test_thirty_seconds_and_three_hundred_seconds_differ() -> None:
    run = start(
        "How long should the timeout be?",
        voters(
            {
                "agent_a": "Answer: The timeout should be 30 seconds.",
                "agent_b": "Answer: The timeout should be 300 seconds.",
            }
        ),
    )
    assert run.exit_code == 2 and run.result.final_answer == ""
    vote = run.result.details["rounds"][0]
    assert sorted(vote["distribution"].values()) == [1, 1]
    assert "all differ" in run.result.how and "leads" not in run.result.trust


def test_paris_worded_three_ways_is_one_group_in_its_most_common_words() -> None:
    """Worded differently, the same answer was a three-way tie."""
    run = start(
        "What is the capital of France?",
        voters(
            {
                "agent_a": "Answer: It's Paris.",
                "agent_b": "Answer: Paris",
                "agent_c": "Answer: The capital of France is Paris.",
                "agent_d": "Answer: Paris",
            }
        ),
    )
    assert run.exit_code == 0, run.result.how
    assert run.result.details["rounds"][0]["distribution"] == {"Paris": 4}
    assert run.result.final_answer == "Paris"


def test_two_of_four_is_no_majority() -> None:
    """2 of the 4 answers asked (one invalid) was 2 of 3 valid answers, 67%, exit 0."""
    run = start(
        "What is 6 x 7?",
        voters(
            {
                "agent_a": "Answer: 42",
                "agent_b": "Answer: 42",
                "agent_c": "Answer: 41",
                "agent_d": "{ newVote }, Confidence: { confidence }, Reasoning: {",
            }
        ),
    )
    assert run.exit_code == 2 and run.result.status == "no_consensus"
    assert run.result.final_answer == ""
    vote = run.result.details["rounds"][0]
    assert vote["needed"] == 3 and vote["largest"] == "42" and vote["winner"] is None
    assert "'42', has 2 of the 4 answers asked; a majority needs 3" in run.result.how


@pytest.mark.parametrize(("threshold", "exit_code"), [(0.3, 0), (0.5, 0), (0.75, 0), (0.8, 2)])
def test_the_threshold_raises_the_bar_and_never_lowers_it(threshold: float, exit_code: int) -> None:
    answers = {"agent_a": "Answer: 42", "agent_b": "Answer: 42", "agent_c": "Answer: 42"}
    answers["agent_d"] = "Answer: 41"
    run = start("What is 6 x 7?", voters(answers, consensus_threshold=threshold))
    assert run.exit_code == exit_code, run.result.how
    if exit_code:
        assert "consensus_threshold 0.8 needs 4" in run.result.how
        assert run.result.finding is not None and run.result.finding.label == "no_consensus"
    low = {"agent_a": "Answer: 42", "agent_b": "Answer: 42", "agent_c": "Answer: 41"}
    low["agent_d"] = "Answer: 40"
    assert start("What is 6 x 7?", voters(low, consensus_threshold=threshold)).exit_code == 2


def test_the_outcome_carries_the_finding_and_every_samples_claim() -> None:
    """Samples of one agent are voters of their own; `started` counts every sample asked."""
    run = start(
        "What is 6 x 7?",
        voters(lambda a, k: "Answer: 41" if (a, k) == ("agent_b", 2) else "Answer: 42", agents=2,
               samples=2),
    )  # fmt: skip
    assert run.exit_code == 0
    finding = run.result.finding
    assert finding is not None and finding.started == 4 and finding.label == "consensus"
    assert finding.agreed == ("agent_a/1", "agent_a/2", "agent_b/1")
    claims = {(c.agent, c.round): c.claim for c in run.result.claims}
    assert claims == {  # the vote's one round is round 1, as its steps and reports number it
        ("agent_a/1", 1): "42",
        ("agent_a/2", 1): "42",
        ("agent_b/1", 1): "42",
        ("agent_b/2", 1): "41",
    }
    assert "'41': 1 of 4" in run.result.disagreements


def test_an_invalid_sample_is_a_claim_with_its_reason() -> None:
    run = start(
        "What is 6 x 7?",
        voters({"agent_a": "Answer: 42", "agent_b": "Answer: 42", "agent_c": "I can't help."}),
    )
    assert run.exit_code == 0
    (bad,) = [c for c in run.result.claims if not c.valid]
    assert bad.agent == "agent_c" and "refuses" in bad.reason


def test_a_config_naming_the_retired_similarity_threshold_still_loads() -> None:
    """Sessions recorded before grouping by claims carry `similarity_threshold`; they resume
    and replay, so the option is read and dropped."""
    assert read(VoteOptions, {"similarity_threshold": 85}) == VoteOptions()
    plan = resolve(voters({"agent_a": "42"}, similarity_threshold=90.0))
    assert "similarity_threshold" not in dump(plan.options)


def _samples(answers: list[str | None]) -> list[dict[str, object]]:
    return [
        {
            "agent": f"agent_{chr(ord('a') + i)}",
            "step": f"r1/answer/agent_{chr(ord('a') + i)}/1",
            "status": "valid" if a is not None else "failed",
            "answer": a,
            "problem": None if a is not None else "the call failed",
        }
        for i, a in enumerate(answers)
    ]


@given(
    st.sampled_from([["1", "2", "1,000", "1000", "3.0", "3"], ["(A)", "B", "b)", "C"]]).flatmap(
        lambda pool: st.lists(st.sampled_from([*pool, None]), max_size=10)
    ),
    st.data(),
)
def test_grouping_invariants(answers: list[str | None], data: st.DataObject) -> None:
    """Counts are largest first and add up to the valid answers; a majority is more than half
    of everything asked; any order gives the same counts."""
    if not answers:
        return
    finding = judge_samples(_samples(answers), 1).finding
    counts = [len(members) for _, members in finding.groups]
    assert counts == sorted(counts, reverse=True)
    assert sum(counts) == sum(a is not None for a in answers)
    assert finding.consensus == (bool(counts) and 2 * counts[0] > len(answers))
    assert (finding.label == "tie") == (
        len(counts) > 1 and counts[0] == counts[1] > 1 and not finding.consensus
    )
    shuffled = data.draw(st.permutations(answers))
    again = judge_samples(_samples(shuffled), 1).finding
    assert sorted(len(m) for _, m in again.groups) == sorted(counts)


def test_equal_numbers_and_options_group_however_written() -> None:
    finding = judge_samples(_samples(["1,000", "1000", "$1000.00", "999", None]), 1).finding
    assert [(claim, len(m)) for claim, m in finding.groups] == [("1,000", 3), ("999", 1)]
    assert finding.consensus  # 3 of 5
    options = judge_samples(_samples(["(C)", "B", "C", "b)"]), 1).finding
    assert options.label == "tie" and options.claim is None


# A walkthrough vote on the embedded model, "What is 3 + 4?" with --samples 2.
WALKTHROUGH = {
    ("agent_a", 1): "Answer: Yes",
    ("agent_a", 2): "Answer: 9",
    ("agent_b", 1): "Answer: 7",
    ("agent_b", 2): "Answer: 5",
    ("agent_c", 1): "Answer: 7",
    ("agent_c", 2): "Answer: 2",
}


def test_without_a_majority_the_round_reads_each_answer_apart_from_its_count() -> None:
    """It read "no majority: 7 has 2 of 6, votes 7 2, 9 1, 5 1, 2 1, 4 needed (1 of 6 answers
    invalid)"."""
    run = start("What is 3 + 4?", voters(lambda a, k: WALKTHROUGH[(a, k)], agents=3, samples=2))
    assert run.exit_code == 2
    record = run.result.details["rounds"][0]
    line = describe_round(record, VoteOptions(samples=2))
    assert line is not None and round_result(line) == (
        "no majority: '7' 2 of 6, '9' 1, '5' 1, '2' 1; 4 of 6 needed; 1 of 6 answers invalid"
    )


def test_without_a_majority_the_answers_are_one_disagreement_not_the_largest_against_none() -> None:
    """The terminal listed "disagreement: '7': 2 of 6" first: the largest group, with no
    majority to disagree with. The disagreement is that the answers differ, largest first."""
    run = start("What is 3 + 4?", voters(lambda a, k: WALKTHROUGH[(a, k)], agents=3, samples=2))
    assert list(run.result.disagreements) == [
        "no answer has a majority; the answers differ: '7' 2 of 6, '9' 1, '5' 1, '2' 1"
    ]


def test_one_group_short_of_a_majority_is_no_disagreement() -> None:
    answers = {("agent_a", 1): "Answer: 7", ("agent_b", 1): "Answer: 7"}
    run = start(
        "What is 3 + 4?",
        voters(lambda a, k: answers.get((a, k), "Answer: Yes"), agents=2, samples=2),
    )
    assert run.exit_code == 2 and list(run.result.disagreements) == []
