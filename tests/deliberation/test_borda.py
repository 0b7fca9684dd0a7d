"""Borda aggregation for refine: scores, winner, ties to the incumbent, abstentions."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moot.deliberation.borda import borda, is_valid_ranking, ranking_problem

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


def test_a_ranking_that_names_a_candidate_twice_abstains_and_scores_nothing() -> None:
    # every candidate is named, one of them twice: counted, A would score 2 + 0
    rankings = [["A", "B", "AB", "A"], ["B", "A", "AB"]]
    result = borda(ABC, rankings, incumbent="A")
    assert result.abstained == (0,) and result.valid_rankings == 1
    assert result.problems == ("it names 'A' twice",)
    assert result.scores == {"A": 1, "B": 2, "AB": 0} and result.winner == "B"
    assert result.as_dict()["problems"] == ["it names 'A' twice"]
    assert not is_valid_ranking(["A", "B", "AB", "A"], ABC)
    assert not is_valid_ranking(("AB", "B", "AB", "A"), ABC)
    # as long as the candidates, and a duplicate in place of one left out
    assert not is_valid_ranking(["A", "B", "AB", "A"], ("A", "B", "AB", "C"))


@pytest.mark.parametrize(
    ("ranking", "problem"),
    [
        (None, "it gave no ranking"),
        ("A B AB", "it is not a list of labels but a str"),
        ({"A": 1}, "it is not a list of labels but a dict"),
        (["A", 3, "B"], "it holds 3, which is not a label"),
        (["A", "B", "C"], "it names 'C', which is not a candidate"),
        (["A", "B", "AB", "A"], "it names 'A' twice"),
        (["B", "B", "AB"], "it names 'B' twice"),
        (["A", "AB"], "it leaves out 'B'"),
        ([], "it leaves out 'A'"),
        (["AB", "A"], "it leaves out 'B'"),
        (["a", "B", "AB"], "it names 'a', which is not a candidate"),
    ],
)
def test_an_invalid_ranking_says_why(ranking: object, problem: str) -> None:
    assert ranking_problem(ranking, ABC) == problem
    assert not is_valid_ranking(ranking, ABC)
    rankings: list[Any] = [ranking, ["B", "A", "AB"]]  # model output: anything at all
    result = borda(ABC, rankings, incumbent="A")
    assert result.abstained == (0,) and result.problems == (problem,)
    assert result.scores == {"A": 1, "B": 2, "AB": 0}


@pytest.mark.parametrize("ranking", [["A", "B", "AB"], ("AB", "A", "B"), ["B", "AB", "A"]])
def test_a_permutation_is_valid(ranking: list[str] | tuple[str, ...]) -> None:
    assert ranking_problem(ranking, ABC) is None and is_valid_ranking(ranking, ABC)


# Ties to the incumbent, pinned where the candidates' order would pick another winner.


def test_a_two_way_tie_goes_to_the_incumbent_even_when_listed_later() -> None:
    rankings = [("A", "B", "AB"), ("B", "A", "AB")]
    # A: 2+1, B: 1+2, AB: 0; the first listed would be A
    result = borda(ABC, rankings, incumbent="B")
    assert result.scores == {"A": 3, "B": 3, "AB": 0}
    assert result.winner == "B" and result.incumbent_won
    assert result.tie and result.tied == ("A", "B") and result.tiebreak == "incumbent"
    last = borda(ABC, [("B", "AB", "A"), ("AB", "B", "A")], incumbent="AB")
    assert last.winner == "AB" and last.tied == ("B", "AB") and last.tiebreak == "incumbent"


def test_a_three_way_tie_goes_to_the_incumbent_listed_last() -> None:
    rankings = [("A", "B", "AB"), ("B", "AB", "A"), ("AB", "A", "B")]
    result = borda(ABC, rankings, incumbent="AB")
    assert result.winner == "AB" and result.tied == ("A", "B", "AB")
    assert result.tiebreak == "incumbent"


def test_the_incumbent_must_tie_for_the_top_to_keep_its_place() -> None:
    # A and AB tie below B: B wins outright, the incumbent's tie does not count
    rankings = [("B", "A", "AB"), ("B", "AB", "A")]
    result = borda(ABC, rankings, incumbent="A")
    assert result.scores == {"A": 1, "B": 4, "AB": 1}
    assert result.winner == "B" and not result.incumbent_won
    assert not result.tie and result.tied == () and result.tiebreak == "none"
    # one point behind is not a tie
    close = borda(ABC, [("B", "A", "AB"), ("A", "AB", "B"), ("B", "AB", "A")], incumbent="A")
    assert close.scores == {"A": 3, "B": 4, "AB": 2} and close.winner == "B"
    assert close.tiebreak == "none"


def test_a_single_candidate_wins_alone() -> None:
    result = borda(("A",), [("A",), None], incumbent="A")
    assert result.scores == {"A": 0} and result.winner == "A"
    assert not result.tie and result.tiebreak == "none" and result.valid_rankings == 1
    assert result.abstained == (1,) and result.problems == ("it gave no ranking",)


def test_no_valid_ranking_keeps_the_incumbent_and_says_so() -> None:
    result = borda(ABC, [None, ["B"], None], incumbent="A")
    assert result.winner == "A" and result.incumbent == "A" and result.no_valid_ranking
    assert result.tie is False and result.tied == () and result.valid_rankings == 0
    assert result.tiebreak == "no_valid_ranking" and result.abstained == (0, 1, 2)
    assert result.problems == ("it gave no ranking", "it leaves out 'A'", "it gave no ranking")
    assert result.scores == {"A": 0, "B": 0, "AB": 0}
    assert result.as_dict()["no_valid_ranking"] is True
    assert borda(ABC, [], incumbent="B").winner == "B"


@pytest.mark.parametrize(
    ("candidates", "incumbent", "message"),
    [
        ((), "A", r"^Borda needs at least one candidate$"),
        (("A", "A"), "A", r"^candidates must be distinct, got \['A', 'A'\]$"),
        (ABC, "C", r"^the incumbent 'C' is not among the candidates \['A', 'B', 'AB'\]$"),
    ],
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
        "problems": [],
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
