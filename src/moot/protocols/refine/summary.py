"""How a refine pass reads in the generic views (a `RoundSummary`: the Borda table as votes,
the winner and the streak as the decision), and what a chairman's synthesis weighs. The worst
case a run can reach (`--dry-run`) is projection.py's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from moot.protocols.refine.options import RefineOptions
from moot.protocols.synthesis import latest_replies
from moot.text import joined
from moot.types import Event, RoundSummary, alias_label

__all__ = ["describe_round", "feedback"]


def describe_round(entry: Mapping[str, Any], options: RefineOptions) -> RoundSummary | None:
    if "round" not in entry or "streak" not in entry:
        return None
    winner, streak, k = entry["winner"], entry["streak"], entry.get("k", "?")
    if entry.get("converged"):
        decision = f"A holds: converged (streak {streak} of {k})"
    elif winner == "A":
        decision = f"A holds (streak {streak} of {k})"
    else:
        decision = f"{winner} wins: the new incumbent (streak 0 of {k})"
    borda = entry.get("borda") or {}
    notes = []
    if borda.get("tie"):
        notes.append(_tie(borda, str(winner)))
    abstained = [j["judge"] for j in entry.get("judges", []) if j.get("ranking") is None]
    if abstained:
        notes.append("abstained: " + ", ".join(alias_label(a) for a in abstained))
    if entry.get("problem"):
        notes.append(str(entry["problem"]))
    return RoundSummary(
        round=int(entry["round"]),
        decision=decision,
        votes={name: float(v) for name, v in (borda.get("scores") or {}).items()},
        problem="; ".join(notes) or None,
        method="Borda",
    )


def feedback(details: Mapping[str, Any], events: list[Event]) -> list[str]:
    """What a chairman's synthesis weighs (protocols/synthesis.py): the last pass's critique
    and its judges' reasons."""
    critiques = [f"Critique by {x}" for x in latest_replies(events, "critic")]
    return critiques + [f"Ranking by {x}" for x in latest_replies(events, "judge")]


def _tie(borda: Mapping[str, Any], winner: str) -> str:
    """How a tie at the top of the Borda count was broken (deliberation/borda.py `_winner`)."""
    tied = f"tie between {joined([str(t) for t in borda.get('tied') or ()])}"
    if borda.get("tiebreak") == "incumbent":
        return f"{tied}: the incumbent {winner} holds"
    return f"{tied}: {winner}, the first of them in candidate order, wins"
