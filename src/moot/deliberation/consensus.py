"""Pure tallies for the court (seed 002, sections 3 and 6): position ids, the candidate for the
next round, the agents' supermajority and the judges' consensus.

A position id is the hash of the position's normalised text (the seed's, kept for the record);
support is counted over positions moot finds to be one (`merge_positions`: texts whose claims
agree by the one agreement relation, deliberation/claims.py), so a paraphrase of a position
supports it instead of splitting its support.

Nothing here calls a model or reads a clock: the same responses give the same answer, which is
what lets a journal replay to the same verdict."""

from __future__ import annotations

import hashlib
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from msgspec import Struct, field

from moot.deliberation.claims import extract_claim, group_claims

__all__ = [
    "AgentConsensus",
    "Evaluation",
    "JudgeConsensus",
    "Response",
    "Vote",
    "VoteTally",
    "detect_agent_consensus",
    "detect_judge_consensus",
    "merge_positions",
    "normalize_position",
    "position_id",
    "rank_positions",
    "required_votes",
    "select_candidate",
    "support_of",
]

Vote = Literal["yes", "no", "abstain"]
Method = Literal["unanimous", "supermajority", "none"]


def normalize_position(text: str) -> str:
    """Trimmed, whitespace collapsed, lower case: texts that differ only so share an id."""
    return re.sub(r"\s+", " ", text.strip()).lower()


def position_id(text: str) -> str:
    """The first 12 hex characters of the SHA-256 of the normalized text."""
    return hashlib.sha256(normalize_position(text).encode("utf-8")).hexdigest()[:12]


def required_votes(voters: int, threshold: float) -> int:
    """ceil(voters x threshold), with the float noise taken out (25 x 0.56 needs 14, not 15)."""
    return math.ceil(round(voters * threshold, 9))


class Response(Struct, frozen=True):
    """One agent's answer in one round. An error response abstains with no position."""

    agent: str
    round: int
    vote: Vote
    position_id: str | None
    position_text: str
    confidence: float
    reasoning: str = ""
    ok: bool = True
    error: str | None = None


class VoteTally(Struct, frozen=True):
    yes: int
    no: int
    abstain: int
    total: int
    eligible: int  # ok responses
    voting_total: int  # yes + no among the eligible
    threshold_votes: int  # yes votes needed; 0 when no vote was possible
    reached: bool

    def as_dict(self) -> dict[str, int | bool]:
        """The seed's VoteTally field names."""
        return {
            "yes": self.yes,
            "no": self.no,
            "abstain": self.abstain,
            "total": self.total,
            "eligible": self.eligible,
            "votingTotal": self.voting_total,
            "supermajorityThreshold": self.threshold_votes,
            "supermajorityReached": self.reached,
        }


class AgentConsensus(Struct, frozen=True):
    reached: bool
    position_id: str | None
    method: Method
    tally: VoteTally


def merge_positions(
    support: Mapping[str, tuple[float, int]], texts: Mapping[str, str]
) -> list[tuple[str, float, int]]:
    """Positions by support, those whose texts agree by moot's check merged into one: (id,
    summed confidence, supporters), best first. A merged position goes by its member with the
    most supporters (then confidence, then the smaller id); `support` maps an id to its summed
    confidence and supporters, `texts` an id to its text (an id without one stands alone)."""
    known = {pid: extract_claim(texts[pid]) for pid in sorted(support) if pid in texts}
    groups = [g.agents for g in group_claims(known)] + [
        (pid,) for pid in sorted(support) if pid not in texts
    ]
    merged = []
    for members in groups:
        lead = min(members, key=lambda pid: (-support[pid][1], -round(support[pid][0], 9), pid))
        score = sum(support[pid][0] for pid in members)
        count = sum(support[pid][1] for pid in members)
        merged.append((lead, score, count))
    # rounding keeps 0.1 + 0.2 and 0.3 equal, so a tie falls to the supporters and the id
    return sorted(merged, key=lambda item: (-round(item[1], 9), -item[2], item[0]))


def support_of(
    responses: Iterable[Response], *, proposals: bool = False
) -> dict[str, tuple[float, int]]:
    """Each position's summed confidence and supporters (seed 3.3): only ok responses that take
    a side count (not abstentions); with `proposals` (round 1, where everyone abstains by rule)
    an ok response's own proposal counts as its support."""
    score: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for r in responses:
        if not r.ok or r.position_id is None or (r.vote == "abstain" and not proposals):
            continue
        score[r.position_id] += r.confidence
        count[r.position_id] += 1
    return {pid: (score[pid], count[pid]) for pid in score}


def rank_positions(
    responses: Iterable[Response],
    *,
    proposals: bool = False,
    texts: Mapping[str, str] | None = None,
) -> list[tuple[str, float, int]]:
    """Positions by support (seed 3.3): (id, summed confidence, supporters), best first.

    Sorted by summed confidence, then supporters, then id. With `texts` (id -> text) positions
    whose texts agree by moot's check count as one (`merge_positions`)."""
    return merge_positions(support_of(responses, proposals=proposals), texts or {})


def select_candidate(
    responses: Iterable[Response],
    *,
    proposals: bool = False,
    texts: Mapping[str, str] | None = None,
) -> str | None:
    """The position the next round votes on, or None if nobody took a side."""
    ranked = rank_positions(responses, proposals=proposals, texts=texts)
    return ranked[0][0] if ranked else None


def detect_agent_consensus(
    responses: Sequence[Response], candidate: str | None, threshold: float = 0.67
) -> AgentConsensus:
    """Supermajority of yes among yes + no of the ok responses (seed 6.1). A yes for any id
    but the candidate's is not support."""
    eligible = [r for r in responses if r.ok]
    yes = sum(1 for r in eligible if r.vote == "yes" and r.position_id == candidate)
    no = sum(1 for r in eligible if r.vote == "no")
    abstain = sum(1 for r in eligible if r.vote == "abstain")
    voting = yes + no
    needed = required_votes(voting, threshold) if candidate is not None and voting else 0
    reached = needed > 0 and yes >= needed
    tally = VoteTally(yes, no, abstain, len(responses), len(eligible), voting, needed, reached)
    if not reached:
        return AgentConsensus(False, None, "none", tally)
    return AgentConsensus(True, candidate, "unanimous" if yes == voting else "supermajority", tally)


class Evaluation(Struct, frozen=True):
    """One judge's evaluation in one judge round."""

    judge: str
    round: int
    selected: str | None
    confidence: float
    scores: dict[str, int] = field(default_factory=dict)
    reasoning: str = ""
    ok: bool = True
    error: str | None = None


class JudgeConsensus(Struct, frozen=True):
    reached: bool
    position_id: str | None  # the leading position, also when its confidence is too low
    confidence: float
    dissents: tuple[str, ...]
    votes: dict[str, int]
    required: int


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def detect_judge_consensus(
    evaluations: Sequence[Evaluation], majority: float = 0.6, min_confidence: float = 0.7
) -> JudgeConsensus:
    """A position selected by at least `majority` of the ok judges, whose selectors' average
    confidence is at least `min_confidence` (seed 6.2). The most selected position leads;
    a tie goes to the higher average confidence, then to the smaller id."""
    eligible = [e for e in evaluations if e.ok and e.selected is not None]
    if not eligible:
        return JudgeConsensus(False, None, 0.0, (), {}, 0)
    required = required_votes(len(eligible), majority)
    votes: dict[str, int] = defaultdict(int)
    for e in eligible:
        assert e.selected is not None
        votes[e.selected] += 1

    def confidence(pid: str) -> float:
        return _mean([e.confidence for e in eligible if e.selected == pid])

    winner = min(votes, key=lambda pid: (-votes[pid], -round(confidence(pid), 9), pid))
    tally = dict(sorted(votes.items()))
    if votes[winner] < required:
        dissents = tuple(e.judge for e in eligible)
        return JudgeConsensus(False, None, 0.0, dissents, tally, required)
    dissents = tuple(e.judge for e in eligible if e.selected != winner)
    average = confidence(winner)
    return JudgeConsensus(average >= min_confidence, winner, average, dissents, tally, required)
