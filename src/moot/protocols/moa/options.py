"""The Mixture-of-Agents options: the `[moa]` section of a config file."""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import Meta

from moot.config import RoleModel, Section, role_tables

__all__ = ["MoaOptions"]


class MoaOptions(Section):
    """Layers of answers, each shown the layer before, and an aggregator's final answer."""

    layers: Annotated[
        int,
        Meta(
            ge=1,
            le=10,
            description="layers of answers (--layers L): layer 1 answers alone, each later "
            "layer is shown the layer before's answers",
        ),
    ] = 3
    aggregator: Annotated[
        RoleModel,
        Meta(
            description="the model that writes the final answer from the last layer's answers: "
            "a model spec, or a table like an agent's; unset: the model of Agent A (of the "
            "first agent, in alias order, whose last answer is valid)"
        ),
    ] = None
    max_quote_chars: Annotated[
        int, Meta(ge=200, description="per answer shown to an agent or the aggregator")
    ] = 20_000

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        return role_tables(data, "aggregator")
