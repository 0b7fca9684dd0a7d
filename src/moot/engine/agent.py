"""A participant of a session, as the engine knows it: its alias, its model spec and config,
and its model (none in replay mode)."""

from __future__ import annotations

from msgspec import Struct

from moot.config import AgentConfig
from moot.models.base import Model

__all__ = ["Agent"]


class Agent(Struct):
    """A participant, known to prompts only by its alias."""

    alias: str  # agent_a
    spec: str  # the model spec, never shown to other agents
    config: AgentConfig
    model: Model | None = None  # None in replay mode

    @property
    def label(self) -> str:
        """'agent_b' -> 'Agent B', 'judge_a' -> 'Judge A'."""
        role, _, letter = self.alias.rpartition("_")
        return f"{role.capitalize()} {letter.upper()}"

    @property
    def letter(self) -> str:
        return self.alias.rsplit("_", 1)[-1]
