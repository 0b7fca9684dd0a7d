"""The council's options: the `[council]` section of a config file."""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import Meta

from moot.config import RoleModel, Section, role_tables

__all__ = ["CouncilOptions"]


class CouncilOptions(Section):
    """Answers, rankings of each other's answers, and a chairman's final answer."""

    chairman: Annotated[
        RoleModel,
        Meta(
            description="the model that writes the final answer: a model spec, or a table like "
            "an agent's; unset: the model of the agent whose answer ranks first"
        ),
    ] = None
    max_quote_chars: Annotated[
        int, Meta(ge=200, description="per answer shown to a ranker or the chairman")
    ] = 20_000

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        return role_tables(data, "chairman")
