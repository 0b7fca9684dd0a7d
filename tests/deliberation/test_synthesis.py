"""The rule a chairman's synthesis is checked by: it may rewrite the picked answer, never what
the agents agree on (deliberation/synthesis.py)."""

from __future__ import annotations

import pytest

from moot.deliberation.synthesis import check_synthesis
from moot.types import Finding

AGREED = Finding(label="consensus", reason="3 of 3 agree", claim="30 seconds", agreed=("a", "b"))
SPLIT = Finding(label="no_consensus", reason="the final answers differ")


def test_a_synthesis_that_keeps_the_agreed_answer_is_accepted() -> None:
    check = check_synthesis("Set the timeout to 30 seconds.\nAnswer: 30 seconds", AGREED)
    assert check.accepted and not check.of_disagreeing
    assert check.reason == "it keeps the agreed answer '30 seconds'"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("A longer wait is safer.\nAnswer: 300 seconds", "contradicts the agreed answer"),
        ("Answer: not 30 seconds", "contradicts the agreed answer"),
        (
            "Answer: measure the service's real load in production first, then choose a limit "
            "from the slowest requests you observe over a typical week of traffic",
            "drops the agreed answer",
        ),
    ],
)
def test_a_synthesis_that_changes_or_drops_the_agreed_answer_is_rejected(
    text: str, why: str
) -> None:
    check = check_synthesis(text, AGREED)
    assert not check.accepted
    assert why in check.reason and "'30 seconds'" in check.reason


def test_with_no_consensus_it_is_a_synthesis_of_disagreeing_answers() -> None:
    check = check_synthesis("Answer: 300 seconds", SPLIT)
    assert check.accepted and check.of_disagreeing
    assert "synthesis of disagreeing answers, not a consensus" in check.reason


# answers 60, 7 and 2 to "What is 5 + 5?" (a tiny model's council), no two alike
APART = Finding(
    label="no_consensus",
    reason="the final answers differ",
    groups=(("60", ("agent_a",)), ("7", ("agent_b",)), ("2", ("agent_c",))),
    started=3,
    valid=3,
)


def test_a_synthesis_that_agrees_with_no_answer_and_contradicts_them_is_rejected() -> None:
    text = (
        "The Council of Experts has decided to give a 5 + 1 = 6 answer based on their "
        "reasoning process. They have ranked this question with the best possible reasons."
    )
    check = check_synthesis(text, APART, task="What is 5 + 5?")
    assert not check.accepted and check.of_disagreeing
    assert check.reason == (
        "its answer '6' agrees with none of the agents' answers and contradicts Agent A's (60), "
        "Agent B's (7) and Agent C's (2), so it is no synthesis of them"
    )


def test_a_synthesis_of_disagreeing_answers_that_draws_on_one_of_them_is_accepted() -> None:
    check = check_synthesis("Two of them slip.\nAnswer: 7", APART, task="What is 5 + 5?")
    assert check.accepted and check.of_disagreeing
    assert "synthesis of disagreeing answers, not a consensus" in check.reason


def test_a_synthesis_moot_cannot_compare_with_any_answer_is_not_rejected_for_it() -> None:
    # long answers moot's check calls unsure about are not shown to be set aside
    prose = Finding(
        label="no_consensus",
        reason="the final answers differ",
        groups=(
            ("Cache the rendered pages at the edge for an hour", ("agent_a",)),
            ("Move the sessions table to its own database server", ("agent_b",)),
        ),
    )
    text = "Answer: profile the slow endpoints first and fix the worst query you find there"
    assert check_synthesis(text, prose).accepted
