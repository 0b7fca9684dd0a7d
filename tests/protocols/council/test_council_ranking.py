"""The council's ranking: a strict parse (an exact permutation of the labels shown, a reason
for each) and the mean-rank aggregate with its ties."""

from __future__ import annotations

import json

import pytest

from moot.errors import FormatError
from moot.protocols.council.ranking import aggregate, parse_ranking


def _reply(ranking: object, reasons: object) -> str:
    return "My reasons first.\n" + json.dumps({"ranking": ranking, "reasons": reasons})


def test_a_ranking_names_each_label_once_with_a_reason() -> None:
    order, reasons = parse_ranking(_reply(["Q", "P"], {"P": "wrong", "Q": "right"}), ["P", "Q"])
    assert order == ["Q", "P"] and reasons == {"P": "wrong", "Q": "right"}


@pytest.mark.parametrize(
    ("ranking", "reasons", "problem"),
    [
        (["P", "P"], {"P": "a", "Q": "b"}, "does not name each of P, Q once"),
        (["P"], {"P": "a", "Q": "b"}, "does not name each of P, Q once"),
        (["P", "Q", "R"], {"P": "a", "Q": "b"}, "does not name each of P, Q once"),
        (["p", "q"], {"P": "a", "Q": "b"}, "does not name each of P, Q once"),  # strict
        ("P > Q", {"P": "a", "Q": "b"}, '"ranking" must be a list of labels'),
        (["P", "Q"], None, '"reasons" must give a reason for each label'),
        (["P", "Q"], {"P": "a", "Q": " "}, "no reason for Q"),
    ],
)
def test_anything_else_is_a_format_error_saying_what_is_wrong(
    ranking: object, reasons: object, problem: str
) -> None:
    with pytest.raises(FormatError, match=problem):
        parse_ranking(_reply(ranking, reasons), ["P", "Q"])


def test_a_reply_without_json_is_a_format_error() -> None:
    with pytest.raises(FormatError):
        parse_ranking("Q is best, then P.", ["P", "Q"])


def test_the_mean_rank_compares_answers_ranked_by_different_numbers_of_agents() -> None:
    """b's author abstained, so a and c are ranked twice and b... b by all three others: a mean
    of places, not a sum, compares them (a sum would put b last for being ranked more)."""
    rankings = [
        {"ranking": ["agent_b", "agent_c", "agent_d"]},  # by a
        {"ranking": None},  # b abstains
        {"ranking": ["agent_b", "agent_a", "agent_d"]},  # by c
        {"ranking": ["agent_a", "agent_b", "agent_c"]},  # by d
    ]
    agg = aggregate(["agent_a", "agent_b", "agent_c", "agent_d"], rankings)
    means = {row["agent"]: row["mean_rank"] for row in agg["order"]}
    assert means == {"agent_a": 1.5, "agent_b": 1.333, "agent_c": 2.5, "agent_d": 3.0}
    assert [row["agent"] for row in agg["order"]] == ["agent_b", "agent_a", "agent_c", "agent_d"]
    assert agg["top"] == "agent_b" and agg["top_tied"] == [] and agg["ties"] == []
    assert agg["valid_rankings"] == 3 and agg["method"] == "mean rank"


def test_ties_share_a_place_and_are_listed_and_unranked_answers_come_last() -> None:
    rankings = [
        {"ranking": ["agent_b", "agent_c"]},
        {"ranking": ["agent_a", "agent_c"]},
        {"ranking": None},
    ]
    agg = aggregate(["agent_a", "agent_b", "agent_c", "agent_d"], rankings)
    assert [(r["agent"], r["place"]) for r in agg["order"]] == [
        ("agent_a", 1),
        ("agent_b", 1),
        ("agent_c", 3),
        ("agent_d", None),
    ]
    assert agg["ties"] == [["agent_a", "agent_b"]] and agg["top_tied"] == ["agent_a", "agent_b"]
    assert agg["top"] == "agent_a"  # alias order among the tied


def test_with_no_valid_ranking_nothing_is_ranked() -> None:
    agg = aggregate(["agent_a", "agent_b"], [{"ranking": None}, {"ranking": None}])
    assert agg["top"] is None and all(r["place"] is None for r in agg["order"])
