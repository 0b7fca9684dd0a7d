"""Borda aggregation for refine: scores, winner, ties to the incumbent, abstentions."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moot.deliberation.borda import borda, is_valid_ranking

ABC = ("A", "B", "AB")


def test_points_are_n_minus_one_for_first_down_to_zero() -> None:
    result = borda(ABC, [("B", "AB", "A"), ("B", "A", "AB"), ("AB", "B", "A")], incumbent="A")
    # B: 2+2+1, AB: 1+0+2, A: 0+1+0
    assert result.scores == {"A": 1, "B": 5, "AB": 3}
    assert result.winner == "B"
    assert not result.tie and result.tied == () and result.tiebreak == "none"
    assert result.valid_rankings == 3 and result.abstained == ()


def test_three_way_tie_goes_to_the_incumbent() -> None:
    # A Latin square: every candidate gets 2+1+0 = 3.
    rankings = [("A", "B", "AB"), ("B", "AB", "A"), ("AB", "A", "B")]
    result = borda(ABC, rankings, incumbent="A")
    assert result.scores == {"A": 3, "B": 3, "AB": 3}
    assert result.winner == "A" and result.incumbent_won
    assert result.tie and result.tied == ("A", "B", "AB") and result.tiebreak == "incumbent"


def test_tie_without_the_incumbent_goes_to_the_first_listed_candidate() -> None:
    rankings = [("B", "AB", "A"), ("AB", "B", "A")]
    result = borda(ABC, rankings, incumbent="A")
    assert result.scores == {"A": 0, "B": 3, "AB": 3}
    assert result.winner == "B"
    assert result.tied == ("B", "AB") and result.tiebreak == "candidate_order"
    # The rule follows the caller's order, not the labels' alphabet.
    assert borda(("A", "AB", "B"), rankings, incumbent="A").winner == "AB"


def test_invalid_rankings_abstain() -> None:
    rankings: list[list[str] | None] = [
        None,
        ["A", "B"],  # missing AB
        ["A", "A", "B"],  # duplicate
        ["A", "B", "C"],  # unknown label
        ["AB", "B", "A"],
    ]
    result = borda(ABC, rankings, incumbent="A")
    assert result.abstained == (0, 1, 2, 3)
    assert result.valid_rankings == 1
    assert result.winner == "AB" and result.scores == {"A": 0, "B": 1, "AB": 2}


def test_no_valid_ranking_keeps_the_incumbent_and_says_so() -> None:
    result = borda(ABC, [None, ["B"], None], incumbent="A")
    assert result.winner == "A" and result.no_valid_ranking
    assert result.tiebreak == "no_valid_ranking"
    assert result.scores == {"A": 0, "B": 0, "AB": 0}
    assert result.as_dict()["no_valid_ranking"] is True
    assert borda(ABC, [], incumbent="B").winner == "B"


@pytest.mark.parametrize(
    ("candidates", "incumbent", "message"),
    [((), "A", "at least one"), (("A", "A"), "A", "distinct"), (ABC, "C", "not among")],
)
def test_bad_candidates_are_refused(
    candidates: tuple[str, ...], incumbent: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        borda(candidates, [], incumbent=incumbent)


def test_is_valid_ranking() -> None:
    assert is_valid_ranking(["AB", "A", "B"], ABC)
    assert not is_valid_ranking("A B AB", ABC)
    assert not is_valid_ranking(["A", "B", 3], ABC)


def test_as_dict_is_json_ready() -> None:
    data = borda(ABC, [("B", "A", "AB")], incumbent="A").as_dict()
    assert data == {
        "candidates": ["A", "B", "AB"],
        "incumbent": "A",
        "scores": {"A": 1, "B": 2, "AB": 0},
        "winner": "B",
        "tie": False,
        "tied": [],
        "tiebreak": "none",
        "valid_rankings": 1,
        "abstained": [],
        "no_valid_ranking": False,
    }


# Properties over any number of candidates and judges.

candidate_sets = st.lists(
    st.text(alphabet="ABCDEFGH", min_size=1, max_size=3), min_size=1, max_size=5, unique=True
)


@st.composite
def elections(draw: st.DrawFn) -> tuple[list[str], list[list[str] | None], str]:
    names = draw(candidate_sets)
    ballot = st.permutations(names).map(list) | st.none()
    rankings = draw(st.lists(ballot, max_size=7))
    incumbent = draw(st.sampled_from(names))
    return names, rankings, incumbent


@given(elections(), st.randoms(use_true_random=False))
def test_judge_order_does_not_matter(
    election: tuple[list[str], list[list[str] | None], str], rng: random.Random
) -> None:
    names, rankings, incumbent = election
    shuffled = list(rankings)
    rng.shuffle(shuffled)
    first, second = borda(names, rankings, incumbent), borda(names, shuffled, incumbent)
    assert first.scores == second.scores
    assert (first.winner, first.tied, first.tiebreak) == (
        second.winner,
        second.tied,
        second.tiebreak,
    )


@given(elections(), st.data())
def test_relabeling_candidates_permutes_the_scores(
    election: tuple[list[str], list[list[str] | None], str], data: st.DataObject
) -> None:
    names, rankings, incumbent = election
    new_names = data.draw(st.permutations([f"x{i}" for i in range(len(names))]))
    rename = dict(zip(names, new_names, strict=True))
    renamed = [None if r is None else [rename[n] for n in r] for r in rankings]
    before = borda(names, rankings, incumbent)
    after = borda([rename[n] for n in names], renamed, rename[incumbent])
    assert after.scores == {rename[n]: s for n, s in before.scores.items()}
    assert after.winner == rename[before.winner]
    assert after.tied == tuple(rename[n] for n in before.tied)


@given(elections(), st.integers(min_value=1, max_value=7), st.data())
def test_a_unanimous_ranking_wins(
    election: tuple[list[str], list[list[str] | None], str], judges: int, data: st.DataObject
) -> None:
    names, _, incumbent = election
    ranking = data.draw(st.permutations(names))
    result = borda(names, [ranking] * judges, incumbent)
    assert result.winner == ranking[0]
    assert not result.tie
    assert result.scores[ranking[0]] == judges * (len(names) - 1)


@given(elections())
def test_ties_go_to_the_incumbent_else_to_the_first_listed(
    election: tuple[list[str], list[list[str] | None], str],
) -> None:
    names, rankings, incumbent = election
    result = borda(names, rankings, incumbent)
    best = max(result.scores.values())
    leaders = tuple(n for n in names if result.scores[n] == best)
    assert result.scores[result.winner] == best or result.no_valid_ranking
    if result.no_valid_ranking:
        assert result.winner == incumbent
    elif len(leaders) > 1:
        assert result.tie and result.tied == leaders
        assert result.winner == (incumbent if incumbent in leaders else leaders[0])
    else:
        assert not result.tie and result.winner == leaders[0]


@given(elections(), st.lists(st.lists(st.text(max_size=2), max_size=4) | st.none(), max_size=4))
def test_abstentions_add_nothing(
    election: tuple[list[str], list[list[str] | None], str], junk: list[list[str] | None]
) -> None:
    names, rankings, incumbent = election
    junk = [j for j in junk if not is_valid_ranking(j, names)]
    clean = borda(names, rankings, incumbent)
    noisy = borda(names, rankings + junk, incumbent)
    assert noisy.scores == clean.scores and noisy.winner == clean.winner
    assert len(noisy.abstained) == len(clean.abstained) + len(junk)
    assert sum(clean.scores.values()) == clean.valid_rankings * len(names) * (len(names) - 1) // 2
