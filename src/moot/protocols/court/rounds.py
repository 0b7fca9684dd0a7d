"""How a court round record (`Outcome.details["rounds"]`) reads in the faces: a proposal
round's positions (it holds no vote), an agent round's yes/no/abstain tally with the votes a
supermajority needed, or a judge round's selections per position id with its invalid verdicts
and failed calls and the selections the panel needed. The live line of a round is this same
reading of its record, so the terminal and the report say the same."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from moot.protocols.court.options import CourtOptions
from moot.text import plural
from moot.types import RoundSummary

__all__ = ["describe_round"]

_VOTES = ("yes", "no", "abstain")


def _numbers(tally: Any) -> dict[str, float]:
    if not isinstance(tally, Mapping):
        return {}
    return {
        str(k): float(v)
        for k, v in tally.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    }


def describe_round(entry: Mapping[str, Any], options: CourtOptions) -> RoundSummary | None:
    number = entry.get("round")
    if not isinstance(number, int):
        return None
    tally = _numbers(entry.get("tally"))
    if entry.get("phase") == "judges":
        required = entry.get("required")
        return RoundSummary(
            round=number,
            stage="judges",
            votes={**tally, **_not_counted(entry)},
            needed=float(required) if isinstance(required, int | float) and required else None,
        )
    if entry.get("candidate") is None and isinstance(entry.get("proposals"), Mapping):
        return RoundSummary(round=number, decision=_proposed(entry, entry["proposals"]))
    votes = {k: tally[k] for k in _VOTES if k in tally}
    failed = entry.get("failed")
    if "failed" in tally:
        votes["failed"] = tally["failed"]
    elif isinstance(failed, list):  # (the seed's tally counts them as total - eligible)
        votes["failed"] = float(len(failed))
    needed = tally.get("supermajorityThreshold") or None
    return RoundSummary(round=number, votes=votes, needed=needed)


def _proposed(entry: Mapping[str, Any], proposals: Mapping[str, Any]) -> str:
    """A proposal round in words: "3 positions proposed by 3 agents; no vote in round 1"."""
    agents = sum(n for n in proposals.values() if isinstance(n, int))
    failed = entry.get("failed")
    none = len(failed) if isinstance(failed, list) else 0
    text = f"{plural(len(proposals), 'position')} proposed by {plural(agents, 'agent')}"
    if none:
        text += f", {none} without a valid position"
    return f"{text}; no vote in round {entry.get('round')} (the agents vote from round 2 on)"


def _not_counted(entry: Mapping[str, Any]) -> dict[str, float]:
    """A judge round's verdicts that selected nothing: invalid (a reply that is no valid
    verdict) and failed (no reply). A record before the two were told apart lists both as
    failed."""
    failed = entry.get("failed")
    if not isinstance(failed, list):
        return {}
    invalid = entry.get("invalid")
    if not isinstance(invalid, list):
        return {"failed": float(len(failed))}
    out = {"invalid": float(len(invalid))}
    if len(failed) > len(invalid):
        out["failed"] = float(len(failed) - len(invalid))
    return out
