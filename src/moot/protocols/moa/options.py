"""The Mixture-of-Agents options: the `[moa]` section of a config file."""

from __future__ import annotations

from pydantic import Field

from moot.config import RoleModel, Section

__all__ = ["MoaOptions"]


class MoaOptions(Section):
    """Layers of answers, each shown the layer before, and an aggregator's final answer."""

    layers: int = Field(
        default=3,
        ge=1,
        le=10,
        description="layers of answers (--layers L): layer 1 answers alone, each later layer "
        "is shown the layer before's answers",
    )
    aggregator: RoleModel = Field(
        default=None,
        description="the model that writes the final answer from the last layer's answers: a "
        "model spec, or a table like an agent's; unset: the model of Agent A (of the first "
        "agent, in alias order, whose last answer is valid)",
    )
    max_quote_chars: int = Field(
        default=20_000, ge=200, description="per answer shown to an agent or the aggregator"
    )
