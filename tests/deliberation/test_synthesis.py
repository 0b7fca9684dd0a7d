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
