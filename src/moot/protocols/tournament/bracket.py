"""The tournament's state: the seeding, each side's stance, each match as it goes, the budget
shares, and how a round record (`Outcome.details["rounds"]`) reads in the faces.

Everything here is derived from journaled answers and the session seed, so a resume or a replay
rebuilds the same bracket.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from msgspec import Struct, field

from moot.deliberation.convergence import ConvergenceResult, Embedder, Thresholds
from moot.deliberation.trust import Participant
from moot.engine.session import Session
from moot.protocols.tournament.options import TournamentOptions
from moot.types import ChangeOfMind, RoundSummary, alias_label

__all__ = [
    "Bout",
    "Bracket",
    "Match",
    "Stance",
    "Tournament",
    "budget_shares",
    "describe_round",
    "participants",
    "progression",
    "worded",
]


class Stance(Struct):
    """A side's current position: the recommendation and what it said about it."""

    alias: str
    recommendation: str
    reasons: tuple[str, ...] = ()
    confidence: float = 0.0
    factors: tuple[str, ...] = ()
    uncertainty: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.alias,
            "recommendation": self.recommendation,
            "reasons": list(self.reasons),
            "confidence": self.confidence,
            "confidence_factors": list(self.factors),
            "uncertainty_points": list(self.uncertainty),
        }


class Bout(Struct):
    """What every match is, of positions (Match) or of changes (tournament/code.py): its
    number, its sides, its arbiter, the session-wide rounds it took and how it ended."""

    number: int
    sides: list[str]  # [leader, challenger]
    arbiter: str | None
    rounds: list[int] = field(default_factory=list)
    converged: bool = False
    ended_early: str | None = None
    winner: str | None = None

    def other(self, alias: str) -> str:
        return self.sides[1] if alias == self.sides[0] else self.sides[0]

    def details(self) -> dict[str, Any]:
        """The match as result.json keeps it (a kind of match adds its own keys)."""
        return {
            "match": self.number,
            "sides": list(self.sides),
            "arbiter": self.arbiter,
            "rounds": list(self.rounds),
        }


class Match(Bout):
    """One match between the leader (side A) and a challenger (side B); a backup takes a
    failed side's place."""

    stances: dict[str, Stance] = field(default_factory=dict)
    scores: list[float] = field(default_factory=list)
    transcript: list[str] = field(default_factory=list)  # what the arbiter reads
    challenges: dict[str, list[str]] = field(default_factory=dict)  # against each side
    concessions: list[str] = field(default_factory=list)
    replaced: dict[str, str] = field(default_factory=dict)  # failed side -> its backup
    last: ConvergenceResult | None = None
    last_pair: tuple[str, str] | None = None
    # every pair of positions measured: (round, result, the two positions in side order)
    checks: list[tuple[int, ConvergenceResult, tuple[str, str]]] = field(default_factory=list)
    forfeit: str | None = None  # the side that lost by failing a challenge round
    incomplete: str | None = None  # why the debate stopped before its end
    decided_by: str | None = None  # arbiter, forfeit, fallback
    reasons: list[str] = field(default_factory=list)
    analysis: dict[str, Any] | None = None

    def side_label(self, alias: str) -> str:
        return "A" if alias == self.sides[0] else "B"

    def details(self) -> dict[str, Any]:
        """The match as result.json keeps it."""
        return {
            **super().details(),
            "convergence": list(self.scores),
            "progression": progression(self.scores),
            "converged": self.converged,
            "deciding_layer": self.last.layer if self.last else None,
            # a side without a valid position in round 0 (it forfeited) has none
            "final_positions": {
                a: self.stances[a].as_dict() for a in self.sides if a in self.stances
            },
            "winner": self.winner,
            "decided_by": self.decided_by,
            "reasons": list(self.reasons),
            "analysis": self.analysis,
            "ended_early": self.ended_early,
            "forfeit": self.forfeit,
            "incomplete": self.incomplete,
            "replaced": dict(self.replaced),
        }


def progression(scores: list[float]) -> str:
    """'35% -> 58% -> 71%': a match's convergence by round."""
    return " -> ".join(f"{score:g}%" for score in scores) or "not measured"


def budget_shares(matches: int) -> list[float]:
    """The cumulative share of the token/cost budget each match may reach (seed 001: 40%, 30%,
    20% for a 4-model bracket, 10% kept in reserve). Generalised: match k of M weighs M + 2 - k
    and the reserve 1, so earlier matches get more, and what a match leaves unspent passes on."""
    weights = [matches + 2 - k for k in range(1, matches + 1)]
    total = sum(weights) + 1
    shares, running = [], 0
    for weight in weights:
        running += weight
        shares.append(running / total)
    return shares


M = TypeVar("M", bound=Bout)


class Bracket(Struct, Generic[M]):
    """What a single-elimination run keeps between matches, of positions or of changes."""

    s: Session
    task: str
    opts: TournamentOptions
    seeds: list[str]
    arbiters: list[str]  # a configured arbiter (or the two-agent default), else empty
    round_no: int = 0
    rounds: list[dict[str, Any]] = field(default_factory=list)  # details["rounds"]
    matches: list[M] = field(default_factory=list)
    out: dict[str, str] = field(default_factory=dict)  # agents that left, and why

    def next_round(self) -> int:
        self.round_no += 1
        return self.round_no

    def arbiter_for(self, index: int, sides: list[str]) -> str | None:
        """The configured arbiter, else the next agent in the seeding not in the match (one
        that lost a match may judge; one that failed or gave junk may not)."""
        if self.arbiters:
            return self.arbiters[0]
        after = self.seeds[index + 1 :] + self.seeds[: index + 1]
        failed = {a for a, why in self.out.items() if why.startswith(("failed", "invalid"))}
        return next((a for a in after if a not in sides and a not in failed), None)

    async def knockout(
        self, contestants: Sequence[str], play: Callable[[int, list[str]], Awaitable[M]]
    ) -> str | None:
        """The first two contestants meet, the winner meets the next challenger, and so on;
        `play(number, [leader, challenger])` plays a match to its winner. A match without a
        winner (neither side holds a valid answer) leaves the leader in its seat, without a
        win, to meet the next challenger. The champion: the final match's winner, or None."""
        leader = contestants[0]
        for number, challenger in enumerate(contestants[1:], start=1):
            m = await play(number, [leader, challenger])
            self.matches.append(m)
            keeper = m.winner if m.winner is not None else m.sides[0]
            for side in m.sides:
                if side != keeper and side not in self.out:
                    self.out[side] = f"lost match {m.number}"
            leader = keeper
        return self.matches[-1].winner if self.matches else leader

    def models(self, contestants: Sequence[str]) -> list[str]:
        """The model specs that took part: the contestants and the arbiters of the matches."""
        specs = self.s.specs
        used = [*contestants, *(m.arbiter for m in self.matches if m.arbiter is not None)]
        return [specs[a] for a in used if a in specs]

    def record(self, champion: str | None) -> dict[str, Any]:
        """The bracket as result.json keeps it: the seeding, each match, who left why."""
        return {
            "seeding": list(self.seeds),
            "shuffled": self.opts.shuffle,
            "matches": [m.details() for m in self.matches],
            "champion": champion,
            "left": dict(self.out),
        }


class Tournament(Bracket[Match], kw_only=True):
    """Everything a run of the question's bracket keeps between matches."""

    backups: list[str]
    embedder: Embedder | None
    thresholds: Thresholds
    shares: list[float]
    # a side without a position in round 0: no reply (an error), or malformed or junk, and why
    failed: dict[str, str] = field(default_factory=dict)
    invalid: dict[str, str] = field(default_factory=dict)
    # a challenge or defense reply that failed or was invalid, by (side, round): why; the
    # side's earlier position stands (as the arena keeps an agent's earlier solution)
    kept: dict[tuple[str, int], str] = field(default_factory=dict)
    # what moot judges the finding on (tournament/finding.py): each contestant's first stated
    # position (None: it had none), every contestant's latest position after each round, the
    # sides that took up the other's position, and whose challenge each side had read
    first: dict[str, str | None] = field(default_factory=dict)
    said: list[dict[str, str | None]] = field(default_factory=list)
    concessions: list[ChangeOfMind] = field(default_factory=list)
    critics: dict[tuple[str, int], tuple[str, ...]] = field(default_factory=dict)

    def share_reached(self, number: int) -> str | None:
        """Why match `number` must end now (its share of the budget is spent), or None.
        Counts the asks this run of the protocol has reached (`Session.spent`): the same on a
        resume and a replay."""
        limits = self.s.limits
        tokens, cost = self.s.spent()
        used: list[tuple[float, str]] = []
        if limits.max_tokens:
            used.append((tokens / limits.max_tokens, f"{tokens:,} of {limits.max_tokens:,} tokens"))
        if limits.max_cost:
            used.append((cost / limits.max_cost, f"${cost:.4f} of ${limits.max_cost:.4f}"))
        share = self.shares[number - 1]
        for fraction, text in used:
            if fraction >= share:
                return f"the budget share of match {number} ({share:.0%}) is spent: {text} used"
        return None


def describe_round(entry: Mapping[str, Any], options: TournamentOptions) -> RoundSummary | None:
    """A round of a match as the faces show it: its convergence on a 0-100 scale, the
    threshold, converged or continue, and the layer that decided (the arbiter as judge)."""
    number = entry.get("round")
    if not isinstance(number, int) or "match" not in entry:
        return None
    score = entry.get("score")
    layer = entry.get("layer")
    where = f"match {entry.get('match')} {entry.get('kind', '')}".strip()
    return RoundSummary(
        round=number,
        judge=entry.get("arbiter") if layer == "arbiter" else None,
        decision=str(entry.get("decision") or "") or None,
        score=float(score) if isinstance(score, int | float) else None,
        scale=100,
        threshold=options.convergence_threshold,
        method=f"{where}, {layer} layer" if layer else where,
        problem=entry.get("problem"),
    )


def label(alias: str) -> str:
    return alias_label(alias)


def worded(text: str) -> str:
    """The text when it says something (a letter or a digit in it), else "": an arbiter's "."
    or "..." is no reason, and the reports leave it out rather than print its punctuation."""
    return text if any(ch.isalnum() for ch in text) else ""


def participants(
    contestants: Sequence[str],
    agreed: Sequence[str],
    failed: Mapping[str, str],
    invalid: Mapping[str, str],
) -> list[Participant]:
    """Each contestant, as the trust assessment counts it: one that failed or gave an invalid
    answer (in any round) is not valid; those holding the agreed answer agreed; the others
    held another position."""
    people = []
    for alias in contestants:
        if alias in failed:
            people.append(Participant(label(alias), "failed", failed[alias]))
        elif alias in invalid:
            people.append(Participant(label(alias), "invalid", invalid[alias]))
        elif alias in agreed:
            people.append(Participant(label(alias), "agreed"))
        else:
            people.append(Participant(label(alias), "dissented"))
    return people
