"""The council's options: the `[council]` section of a config file."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from moot.config import AgentConfig, Section

__all__ = ["CouncilOptions"]


class CouncilOptions(Section):
    """Answers, rankings of each other's answers, and a chairman's final answer."""

    chairman: AgentConfig | None = Field(
        default=None,
        description="the model that writes the final answer: a model spec, or a table like an "
        "agent's; unset: the model of the agent whose answer ranks first",
    )
    max_quote_chars: int = Field(
        default=20_000, ge=200, description="per answer shown to a ranker or the chairman"
    )

    @field_validator("chairman", mode="before")
    @classmethod
    def _spec(cls, value: Any) -> Any:
        """`chairman = "openai:gpt-5.2"` is the table `{model = "openai:gpt-5.2"}`."""
        return {"model": value} if isinstance(value, str) else value
