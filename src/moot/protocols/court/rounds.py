"""How a court round record (`Outcome.details["rounds"]`) reads in the faces: an agent round's
yes/no/abstain tally with the votes a supermajority needed, or a judge round's selections per
position id with the selections the panel needed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from moot.protocols.court.options import CourtOptions
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
            votes=tally,
            needed=float(required) if isinstance(required, int | float) and required else None,
        )
    votes = {k: tally[k] for k in _VOTES if k in tally}
    if "failed" in tally:
        votes["failed"] = tally["failed"]
    needed = tally.get("supermajorityThreshold") or None
    return RoundSummary(round=number, votes=votes, needed=needed)
