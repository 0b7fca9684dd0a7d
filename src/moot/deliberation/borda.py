"""Borda aggregation of judges' rankings (seed 004, "Tournaments": N judges rank A, B and AB,
Borda count, a tie goes to the incumbent).

Points: with n candidates, a judge's first choice gets n-1 points, the next n-2, ..., the last 0.
The seed says "Borda count" without the points; n-1..0 is the textbook Borda count. Because every
valid ranking ranks every candidate, any other equally spaced scale (n..1, say) adds the same
constant to every candidate and so gives the same winner and the same ties.

A judge whose ranking is missing or is not a permutation of the candidates abstains: it adds no
points, and `problems` says why ("it names 'A' twice": a ranking that names a candidate twice
would score it twice). Ties:
  1. the incumbent wins a tie it is part of (conservative: a revision must beat it outright);
  2. otherwise the tied candidate listed first in `candidates` wins, so a caller lists its
     candidates from the most to the least conservative (refine: A, B, AB);
  3. with no valid ranking at all, the incumbent keeps its place and `no_valid_ranking` says so.

Pure: no model calls, no clock, no randomness; the same rankings always give the same result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from msgspec import Struct

__all__ = [
    "BordaResult",
    "TieBreak",
    "borda",
    "is_valid_ranking",
    "ranking_problem",
    "ranking_schema",
]

TieBreak = Literal["none", "incumbent", "candidate_order", "no_valid_ranking"]


class BordaResult(Struct, frozen=True):
    """The aggregate of one pass's rankings.

    `scores` holds every candidate in the order of `candidates`; `tied` lists the candidates
    that share the top score (in candidate order), empty when the winner won outright."""

    candidates: tuple[str, ...]
    incumbent: str
    scores: dict[str, int]
    winner: str
    tied: tuple[str, ...]
    tiebreak: TieBreak
    valid_rankings: int
    abstained: tuple[int, ...]  # positions in the input of the judges that abstained
    problems: tuple[str, ...]  # why each of them abstained, in the same order

    @property
    def no_valid_ranking(self) -> bool:
        """True when every judge abstained and the incumbent kept its place by default."""
        return self.valid_rankings == 0

    @property
    def tie(self) -> bool:
        """True when candidates shared the top score (the winner did not win outright)."""
        return bool(self.tied)

    @property
    def incumbent_won(self) -> bool:
        return self.winner == self.incumbent

    def as_dict(self) -> dict[str, object]:
        """Plain JSON-ready data, for `result.json`."""
        return {
            "candidates": list(self.candidates),
            "incumbent": self.incumbent,
            "scores": dict(self.scores),
            "winner": self.winner,
            "tie": self.tie,
            "tied": list(self.tied),
            "tiebreak": self.tiebreak,
            "valid_rankings": self.valid_rankings,
            "abstained": list(self.abstained),
            "problems": list(self.problems),
            "no_valid_ranking": self.no_valid_ranking,
        }


def ranking_problem(ranking: object, candidates: Sequence[str]) -> str | None:
    """None when `ranking` is a list or tuple naming every candidate exactly once, else why not:
    the first of a non-label, an unknown label, a label named twice, a candidate left out."""
    if ranking is None:
        return "it gave no ranking"
    if not isinstance(ranking, list | tuple):
        return f"it is not a list of labels but a {type(ranking).__name__}"
    known = set(candidates)
    seen: set[str] = set()
    for label in ranking:
        if not isinstance(label, str):
            return f"it holds {label!r}, which is not a label"
        if label not in known:
            return f"it names {label!r}, which is not a candidate"
        if label in seen:
            return f"it names {label!r} twice"
        seen.add(label)
    missing = [name for name in candidates if name not in seen]
    if missing:
        return f"it leaves out {missing[0]!r}"
    return None


def is_valid_ranking(ranking: object, candidates: Sequence[str]) -> bool:
    """True when `ranking` is a list or tuple naming every candidate exactly once."""
    return ranking_problem(ranking, candidates) is None


def _check_candidates(candidates: Sequence[str], incumbent: str) -> tuple[str, ...]:
    names = tuple(candidates)
    if not names:
        raise ValueError("Borda needs at least one candidate")
    if len(set(names)) != len(names):
        raise ValueError(f"candidates must be distinct, got {list(names)}")
    if incumbent not in names:
        raise ValueError(f"the incumbent {incumbent!r} is not among the candidates {list(names)}")
    return names


def borda(
    candidates: Sequence[str],
    rankings: Sequence[Sequence[str] | None],
    incumbent: str,
) -> BordaResult:
    """Aggregate the judges' rankings (best first) into Borda scores and a winner.

    `rankings[i]` is judge i's ranking, or None when it gave none; an entry that is not a
    permutation of `candidates` is an abstention as well. See the module docstring for ties."""
    names = _check_candidates(candidates, incumbent)
    top_points = len(names) - 1
    scores = dict.fromkeys(names, 0)
    abstained: list[int] = []
    problems: list[str] = []
    for judge, ranking in enumerate(rankings):
        problem = ranking_problem(ranking, names)
        if problem is not None:
            abstained.append(judge)
            problems.append(problem)
            continue
        assert ranking is not None  # ranking_problem refuses None
        for place, name in enumerate(ranking):
            scores[name] += top_points - place
    valid = len(rankings) - len(abstained)
    winner, tiebreak, tied = _winner(names, scores, incumbent, valid)
    return BordaResult(
        candidates=names,
        incumbent=incumbent,
        scores=scores,
        winner=winner,
        tied=tied,
        tiebreak=tiebreak,
        valid_rankings=valid,
        abstained=tuple(abstained),
        problems=tuple(problems),
    )


def _winner(
    names: tuple[str, ...], scores: dict[str, int], incumbent: str, valid: int
) -> tuple[str, TieBreak, tuple[str, ...]]:
    """The winner, how a tie was broken and the candidates tied at the top (see the module
    docstring for the order of the rules)."""
    if valid == 0:
        return incumbent, "no_valid_ranking", ()
    best = max(scores.values())
    leaders = tuple(name for name in names if scores[name] == best)
    if len(leaders) == 1:
        return leaders[0], "none", ()
    if incumbent in leaders:
        return incumbent, "incumbent", leaders
    return leaders[0], "candidate_order", leaders


def ranking_schema(labels: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of a ranking that names each of `labels` once, best first (a field of
    the replies of judges and rankers, for models that enforce a schema)."""
    return {
        "type": "array",
        "items": {"type": "string", "enum": list(labels)},
        "minItems": len(labels),
        "maxItems": len(labels),
    }
