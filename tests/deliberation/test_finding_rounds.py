"""moot's finding is asked again after every round, over every round so far (the arena does,
and a resume of 45 rounds does it 90 times): each round is read, and each pair of rounds
compared, once; the finding is the one a first reading gives (issue 23)."""

from __future__ import annotations

import pytest

from moot.deliberation import finding
from moot.deliberation.claims import Claim, Comparison, compare
from moot.deliberation.finding import judge_answers

ABC = ["agent_a", "agent_b", "agent_c"]
TASK = "How many moves does the puzzle take?"


def forget() -> None:
    """Empty what the finding keeps between calls (its lru_cache functions)."""
    for value in vars(finding).values():
        if callable(getattr(value, "cache_clear", None)):
            value.cache_clear()


def history(rounds: int) -> list[dict[str, str | None]]:
    """Agent C moves between two answers every round; A and B keep theirs."""
    return [
        {
            "agent_a": "The puzzle takes 408 moves.",
            "agent_b": "It takes 418 moves." if r % 3 else None,
            "agent_c": f"It takes {400 + r % 2 * 8} moves.",
        }
        for r in range(rounds)
    ]


def test_each_pair_of_rounds_is_compared_once_however_often_the_finding_is_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    forget()
    calls = 0

    def counted(a: Claim, b: Claim) -> Comparison:
        nonlocal calls
        calls += 1
        return compare(a, b)

    monkeypatch.setattr(finding, "compare", counted)
    rounds = 40
    answers = history(rounds)
    for r in range(1, rounds + 1):  # as the arena asks: after every round, over all so far
        judge_answers(answers[:r], started=ABC, task=TASK)
    # a pair of rounds costs at most 3 comparisons here (C with C, then C toward A and B):
    # reading every round again after every round cost about 40 * 40 / 2 pairs
    assert calls <= 4 * rounds


def test_a_finding_asked_round_after_round_is_the_one_read_afresh() -> None:
    answers = history(12)
    reasons: dict[str, str] = {}
    for r in range(1, len(answers) + 1):
        if r == 7:  # reasons come later than the rounds they explain
            reasons["agent_b"] = "its answer was junk"
        critics = {("agent_c", q): ("agent_a",) for q in range(1, r, 2)}
        kept = judge_answers(answers[:r], started=ABC, critics=critics, reasons=reasons)
        forget()
        fresh = judge_answers(answers[:r], started=ABC, critics=critics, reasons=reasons)
        assert kept == fresh
    assert kept.changes and any(c.critics == ("agent_a",) for c in kept.changes)
    rows = [c for c in kept.claims if c.agent == "agent_b" and not c.valid]
    assert rows and {c.reason for c in rows} == {"its answer was junk"}


def test_a_finding_that_reads_its_rounds_from_the_ones_before_reads_them_as_afresh() -> None:
    """The claims table and the changes of mind of round r are those of the rounds before it,
    as a finding a round earlier read them, and round r's own: asked out of order, with the
    answers kept (`kept`) in some rounds, a reason that comes later and a round struck out
    after it was read, each finding is the one a first reading gives."""
    answers = history(14)
    asked = [5, 6, 7, 3, 14, 13, 1, 2, 9, 10]
    for at, r in enumerate(asked):
        kept = {("agent_c", q): "its revision was no answer" for q in range(2, r, 4)}
        reasons = {"agent_b": "its answer was junk"} if at >= 6 else {}
        critics = {("agent_c", q): ("agent_b",) for q in range(1, r)}
        if at == 8:
            answers[r - 1] = {**answers[r - 1], "agent_a": None}
        read = judge_answers(
            answers[:r], started=ABC, critics=critics, reasons=reasons, kept=kept, task=TASK
        )
        forget()
        fresh = judge_answers(
            answers[:r], started=ABC, critics=critics, reasons=reasons, kept=kept, task=TASK
        )
        assert read == fresh
        assert [c.round for c in read.claims] == sorted(c.round for c in read.claims)
    assert any(c.kept for c in read.claims)
    assert read.changes and all(c.critics == ("agent_b",) for c in read.changes)


def test_a_finding_past_the_rounds_kept_reads_every_round() -> None:
    answers = history(finding._ROUNDS_KEPT + 3)
    long = judge_answers(answers, started=ABC, task=TASK)
    assert {c.round for c in long.claims} == set(range(len(answers)))
    forget()
    for r in range(len(answers) - 5, len(answers) + 1):
        read = judge_answers(answers[:r], started=ABC, task=TASK)
    assert read == long


def test_an_answer_struck_out_after_the_round_is_read_counts_as_struck() -> None:
    """The arena sets an answer its reviewers rejected to None in the round already read."""
    rnd: dict[str, str | None] = {"agent_a": "408", "agent_b": "408", "agent_c": "418"}
    assert judge_answers([rnd], started=ABC).consensus
    rnd["agent_b"] = None
    j = judge_answers([rnd], started=ABC, reasons={"agent_b": "no answer, said its reviewers"})
    assert not j.consensus
    (row,) = [c for c in j.claims if c.agent == "agent_b"]
    assert (row.valid, row.reason) == (False, "no answer, said its reviewers")


def test_the_same_final_answers_are_compared_once_for_the_check_and_the_finding() -> None:
    """The arena's check before the judge and its finding after it group the same answers."""
    from moot.deliberation import claims

    answers = {f"agent_{x}": f"Use a {x}-tree keyed by value ({x} unique)." for x in "abcd"}
    judge_answers([answers], started=sorted(answers), task=TASK)
    compared = claims._compared.cache_info().misses
    again = judge_answers([answers], started=sorted(answers), task=TASK)
    assert claims._compared.cache_info().misses == compared
    assert again.finding.groups == judge_answers([answers], started=sorted(answers)).finding.groups
