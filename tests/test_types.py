"""The shared data of moot.types: how ids are shown."""

from __future__ import annotations

from moot.text.rounds import round_result
from moot.types import RoundSummary, alias_label


def test_an_alias_label_reads_agents_judges_and_one_of_several_answers() -> None:
    assert alias_label("agent_b") == "Agent B" and alias_label("judge_a") == "Judge A"
    assert alias_label("agent_b/2") == "Agent B (answer 2)"
    # a step id or any other text is shown as given
    for other in ("r1/evaluate/agent_b", "agent_b/x", "me/2", "arbiter_a/1/2"):
        assert alias_label(other) == other
    assert alias_label(None) == "-" and alias_label("") == "-"


def test_a_tally_of_answers_reads_each_answer_apart_from_its_count() -> None:
    """A walkthrough vote's line read "no majority: 7 has 2 of 6, votes 7 2, 9 1, 5 1, 2 1, 4
    needed (1 of 6 answers invalid)": answers and counts ran together."""
    tally = RoundSummary(
        round=1,
        decision="no majority",
        votes={"7": 2, "9": 1, "5": 1, "2": 1},
        needed=4,
        out_of=6,
        problem="1 of 6 answers invalid",
    )
    assert round_result(tally) == (
        "no majority: '7' 2 of 6, '9' 1, '5' 1, '2' 1; 4 of 6 needed; 1 of 6 answers invalid"
    )
    # a long answer is cut, its own commas and numbers inside its quotes
    long = "However, when dealing with 3 and 4 the sum is 7, as counting on from 3 shows"
    shown = round_result(RoundSummary(round=1, votes={long: 3}, needed=2, out_of=3))
    assert shown == (
        "'However, when dealing with 3 and 4 the sum is 7, as count...' 3 of 3; 2 of 3 needed"
    )


def test_a_tally_of_votes_without_a_total_reads_as_before() -> None:
    court = RoundSummary(round=2, votes={"yes": 2, "no": 0, "abstain": 0, "failed": 1}, needed=2)
    assert round_result(court) == "votes yes 2, no 0, abstain 0, failed 1, 2 needed"
