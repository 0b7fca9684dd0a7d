"""The vote protocol's options: the `[vote]` section of a config file."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from moot.config import Section

__all__ = ["VoteOptions"]

# Options that older versions had and that no longer mean anything: a session recorded with one
# still resumes and replays, so they are read and dropped, never refused.
RETIRED = ("similarity_threshold",)  # answers are grouped by moot's agreement check now


class VoteOptions(Section):
    """Independent answers and a majority: the baseline every deliberation is measured against.
    A majority is always more than half of all answers asked; `consensus_threshold` can only
    raise that bar."""

    samples: int = Field(
        default=1, ge=1, le=100, description="answers asked of every agent (--samples K)"
    )
    consensus_threshold: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="the share of all answers asked that the largest group needs at least; it "
        "raises the bar, never lowers it: a majority is always more than half",
    )

    @model_validator(mode="before")
    @classmethod
    def _drop_retired(cls, data: Any) -> Any:
        if isinstance(data, dict) and any(k in data for k in RETIRED):
            return {k: v for k, v in data.items() if k not in RETIRED}
        return data
