"""The pick protocol's options: the `[pick]` section of a config file."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from moot.config import Section

__all__ = ["PickOptions"]


class PickOptions(Section):
    by: Literal["human", "judge", "none"] = Field(
        default="human",
        description="who picks the winner: you on the terminal, a judge model, or nobody yet",
    )
    judge: str | None = Field(
        default=None,
        description="the judge's model spec with by = judge (default: the first agent's)",
    )
    max_quote_chars: int = Field(default=20_000, ge=200, description="per quoted diff for a judge")
