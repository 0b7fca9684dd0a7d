"""The court's pure tallies: position ids, candidate selection, supermajority, judge consensus,
and the context cut that keeps the first and last rounds."""

from __future__ import annotations

import hashlib

import pytest

from moot.deliberation.consensus import (
    Evaluation,
    Response,
    detect_agent_consensus,
    detect_judge_consensus,
    merge_positions,
    position_id,
    rank_positions,
    required_votes,
    select_candidate,
)
from moot.protocols.court.context import Block, fit_rounds

A, B, C = "a" * 12, "b" * 12, "c" * 12


def vote(
    agent: str, vote: str, pid: str | None, confidence: float = 0.8, ok: bool = True
) -> Response:
    return Response(agent, 2, vote, pid, "text", confidence, ok=ok)  # type: ignore[arg-type]


def test_position_id_is_the_sha256_of_the_normalized_text() -> None:
    expected = hashlib.sha256(b"use postgres for sessions.").hexdigest()[:12]
    assert position_id("Use Postgres for sessions.") == expected
    assert position_id("  use   POSTGRES\n for\tsessions. ") == expected
    assert position_id("Use Postgres for sessions!") != expected
    assert len(expected) == 12


def test_candidate_is_the_largest_summed_confidence_then_supporters_then_id() -> None:
    # one confident outlier (0.95) loses to two moderate supporters (0.5 + 0.5)
    responses = [vote("x", "no", A, 0.95), vote("y", "no", B, 0.5), vote("z", "no", B, 0.5)]
    assert select_candidate(responses) == B
    # equal sums: more supporters win
    responses = [vote("x", "no", A, 0.8), vote("y", "no", B, 0.4), vote("z", "no", B, 0.4)]
    assert select_candidate(responses) == B
    # equal sums and supporters: the smaller id wins, whatever the order
    assert select_candidate([vote("x", "no", B), vote("y", "no", A)]) == A
    assert select_candidate([vote("x", "no", A), vote("y", "no", B)]) == A
    # float noise does not decide: 0.1 + 0.2 against 0.3, one supporter more wins
    noisy = [vote("x", "no", B, 0.1), vote("y", "no", B, 0.2), vote("z", "no", A, 0.3)]
    assert select_candidate(noisy) == B


def test_candidate_ignores_abstentions_and_errors_except_round_one_proposals() -> None:
    responses = [
        vote("x", "abstain", A, 1.0),
        vote("y", "no", B, 0.1),
        vote("z", "no", C, 1.0, ok=False),
    ]
    assert select_candidate(responses) == B
    assert select_candidate(responses, proposals=True) == A
    assert select_candidate([vote("x", "abstain", A)]) is None


def test_unanimous_and_supermajority_are_told_apart() -> None:
    unanimous = detect_agent_consensus([vote("x", "yes", A), vote("y", "yes", A)], A)
    assert unanimous.reached and unanimous.method == "unanimous"
    assert unanimous.tally.as_dict()["supermajorityThreshold"] == 2

    three_of_four = [vote("w", "yes", A), vote("x", "yes", A), vote("y", "yes", A)]
    result = detect_agent_consensus([*three_of_four, vote("z", "no", B)], A)
    assert result.reached and result.method == "supermajority" and result.position_id == A


def test_two_of_three_needs_a_threshold_at_or_below_two_thirds() -> None:
    responses = [vote("x", "yes", A), vote("y", "yes", A), vote("z", "no", B)]
    default = detect_agent_consensus(responses, A)  # 0.67: ceil(3 x 0.67) = 3
    assert not default.reached and default.tally.threshold_votes == 3
    lower = detect_agent_consensus(responses, A, threshold=0.66)
    assert lower.reached and lower.method == "supermajority"


def test_a_yes_for_another_id_is_not_support_and_abstentions_do_not_vote() -> None:
    responses = [vote("x", "yes", A), vote("y", "yes", B), vote("z", "abstain", None)]
    result = detect_agent_consensus(responses, A)
    tally = result.tally
    assert (tally.yes, tally.no, tally.abstain, tally.voting_total) == (1, 0, 1, 1)
    assert result.reached  # one yes among one voter; the stray yes neither helps nor hurts
    failed = detect_agent_consensus([vote("x", "yes", A, ok=False), vote("y", "no", B)], A)
    assert not failed.reached and failed.tally.eligible == 1 and failed.tally.yes == 0


def test_no_candidate_or_no_votes_is_no_consensus() -> None:
    assert not detect_agent_consensus([vote("x", "abstain", A)], A).reached
    assert not detect_agent_consensus([vote("x", "yes", A)], None).reached


def test_required_votes_ignores_float_noise() -> None:
    assert 25 * 0.56 > 14  # the noise this guards against
    assert required_votes(25, 0.56) == 14
    assert required_votes(10, 0.7) == 7
    assert required_votes(3, 0.67) == 3
    assert required_votes(5, 0.6) == 3


def judge(name: str, pid: str | None, confidence: float = 0.9, ok: bool = True) -> Evaluation:
    return Evaluation(name, 1, pid, confidence, ok=ok)


def test_judge_majority_with_enough_confidence_selects_and_names_dissents() -> None:
    result = detect_judge_consensus([judge("j1", A), judge("j2", A), judge("j3", B)])
    assert result.reached and result.position_id == A
    assert result.dissents == ("j3",) and result.required == 2
    assert result.confidence == pytest.approx(0.9)


def test_judge_majority_below_minimum_confidence_is_not_consensus() -> None:
    result = detect_judge_consensus([judge("j1", A, 0.6), judge("j2", A, 0.7), judge("j3", B)])
    assert not result.reached and result.position_id == A
    assert result.confidence == pytest.approx(0.65)


def test_judges_split_three_ways_is_not_consensus() -> None:
    result = detect_judge_consensus([judge("j1", A), judge("j2", B), judge("j3", C)])
    assert not result.reached and result.position_id is None
    assert set(result.dissents) == {"j1", "j2", "j3"}


def test_judge_ties_go_to_average_confidence_then_to_the_smaller_id() -> None:
    # 2-2 with a 0.5 threshold: both reach the majority; confidence decides
    tied = [judge("j1", B, 0.9), judge("j2", B, 0.9), judge("j3", A, 0.8), judge("j4", A, 0.8)]
    assert detect_judge_consensus(tied, majority=0.5).position_id == B
    even = [judge("j1", B), judge("j2", B), judge("j3", A), judge("j4", A)]
    assert detect_judge_consensus(even, majority=0.5).position_id == A
    assert detect_judge_consensus(list(reversed(even)), majority=0.5).position_id == A


def test_failed_judges_do_not_count() -> None:
    result = detect_judge_consensus([judge("j1", A), judge("j2", None, ok=False), judge("j3", B)])
    assert not result.reached and result.required == 2  # ceil(2 x 0.6)
    assert detect_judge_consensus([judge("j1", None, ok=False)]).position_id is None


def blocks(*sizes: int) -> list[Block]:
    return [Block(n, f"round {n}", size) for n, size in enumerate(sizes, start=1)]


def test_fit_rounds_drops_middle_rounds_oldest_first_and_keeps_the_first_and_last() -> None:
    kept, dropped = fit_rounds(blocks(100, 100, 100, 100, 100), budget=350)
    assert [b.round for b in kept] == [1, 4, 5] and dropped == [2, 3]
    kept, dropped = fit_rounds(blocks(100, 100, 100), budget=300)
    assert [b.round for b in kept] == [1, 2, 3] and dropped == []
    kept, dropped = fit_rounds(blocks(100, 100, 100), budget=150)
    assert [b.round for b in kept] == [3] and dropped == [1, 2]
    kept, dropped = fit_rounds(blocks(500), budget=10)
    assert [b.round for b in kept] == [1] and dropped == []  # the last round always stays


def test_positions_whose_texts_agree_are_one_and_pool_their_support() -> None:
    pg, we_pg, lite = position_id("Use Postgres."), position_id("We should use Postgres."), "l" * 12
    texts = {pg: "Use Postgres.", we_pg: "We should use Postgres.", lite: "Use SQLite."}
    responses = [
        vote("x", "no", pg, 0.5),
        vote("y", "no", we_pg, 0.5),
        vote("w", "no", we_pg, 0.1),
        vote("z", "no", lite, 0.9),
    ]
    # by id, SQLite's single confident supporter leads; by claims, Postgres's three do
    assert select_candidate(responses) == lite
    assert rank_positions(responses, texts=texts) == [
        (we_pg, pytest.approx(1.1), 3),
        (lite, 0.9, 1),
    ]
    # a contradiction is never merged, however alike the words
    apart = {pg: "Use Postgres.", lite: "Do not use Postgres."}
    assert len(merge_positions({pg: (0.5, 1), lite: (0.5, 1)}, apart)) == 2
