"""The arena's options: the `[arena]` section of a config file."""

from pydantic import Field

from moot.config import Section

__all__ = ["ArenaOptions"]


class ArenaOptions(Section):
    max_rounds: int = Field(default=3, ge=1, le=50)
    consensus_score: int = Field(default=8, ge=1, le=10)
    context_budget_tokens: int = Field(
        default=50_000, ge=500, description="past this estimate, later rounds start fresh"
    )
    max_quote_chars: int = Field(default=12_000, ge=200, description="per quoted agent text")
    verify_commands: list[str] = Field(default=[])
    reask_on_bad_format: bool = True
    stop_on_agreement: bool = Field(
        default=True,
        description="end as soon as the agents' answers agree (round 0 included) instead of "
        "revising a settled answer",
    )
