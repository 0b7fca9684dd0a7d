"""The arena's options: the `[arena]` section of a config file."""

from typing import Annotated

from msgspec import Meta, field

from moot.config import Section

__all__ = ["ArenaOptions"]


class ArenaOptions(Section):
    max_rounds: Annotated[int, Meta(ge=1, le=50)] = 3
    consensus_score: Annotated[int, Meta(ge=1, le=10)] = 8
    context_budget_tokens: Annotated[
        int, Meta(ge=500, description="past this estimate, later rounds start fresh")
    ] = 50_000
    max_quote_chars: Annotated[int, Meta(ge=200, description="per quoted agent text")] = 12_000
    verify_commands: list[str] = field(default_factory=list)
    reask_on_bad_format: bool = True
    stop_on_agreement: Annotated[
        bool,
        Meta(
            description="end as soon as the agents' answers agree (round 0 included) instead "
            "of revising a settled answer"
        ),
    ] = True
