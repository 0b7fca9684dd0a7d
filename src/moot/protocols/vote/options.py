"""The vote protocol's options: the `[vote]` section of a config file."""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import Meta

from moot.config import Section

__all__ = ["VoteOptions"]

# Options that older versions had and that no longer mean anything: a session recorded with one
# still resumes and replays, so they are read and dropped, never refused.
RETIRED = ("similarity_threshold",)  # answers are grouped by moot's agreement check now


class VoteOptions(Section):
    """Independent answers and a majority: the baseline every deliberation is measured against.
    A majority is always more than half of all answers asked; `consensus_threshold` can only
    raise that bar."""

    samples: Annotated[
        int, Meta(ge=1, le=100, description="answers asked of every agent (--samples K)")
    ] = 1
    consensus_threshold: Annotated[
        float,
        Meta(
            gt=0,
            le=1,
            description="the share of all answers asked that the largest group needs at "
            "least; it raises the bar, never lowers it: a majority is always more than half",
        ),
    ] = 0.5

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in data.items() if k not in RETIRED}
