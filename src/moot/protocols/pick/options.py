"""The pick protocol's options: the `[pick]` section of a config file."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from moot.config import Section

__all__ = ["PickOptions"]


class PickOptions(Section):
    by: Annotated[
        Literal["human", "judge", "none"],
        Meta(description="who picks the winner: you on the terminal, a judge model, or nobody yet"),
    ] = "human"
    judge: (
        Annotated[
            str,
            Meta(description="the judge's model spec with by = judge (default: the first agent's)"),
        ]
        | None
    ) = None
    max_quote_chars: Annotated[int, Meta(ge=200, description="per quoted diff for a judge")] = (
        20_000
    )
