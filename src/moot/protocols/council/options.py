"""The council's options: the `[council]` section of a config file."""

from __future__ import annotations

from pydantic import Field

from moot.config import RoleModel, Section

__all__ = ["CouncilOptions"]


class CouncilOptions(Section):
    """Answers, rankings of each other's answers, and a chairman's final answer."""

    chairman: RoleModel = Field(
        default=None,
        description="the model that writes the final answer: a model spec, or a table like an "
        "agent's; unset: the model of the agent whose answer ranks first",
    )
    max_quote_chars: int = Field(
        default=20_000, ge=200, description="per answer shown to a ranker or the chairman"
    )
