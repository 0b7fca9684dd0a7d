"""The vote protocol's options: the `[vote]` section of a config file."""

from __future__ import annotations

from pydantic import Field

from moot.config import Section

__all__ = ["VoteOptions"]


class VoteOptions(Section):
    """Independent answers and a majority: the baseline every deliberation is measured against."""

    samples: int = Field(
        default=1, ge=1, le=100, description="answers asked of every agent (--samples K)"
    )
    consensus_threshold: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="the winner's share of the valid answers for a majority",
    )
    similarity_threshold: float = Field(
        default=90.0,
        ge=0,
        le=100,
        description="free-text answers at least this similar (0-100, text similarity) are one",
    )
