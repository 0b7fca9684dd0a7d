"""The tournament's options: the `[tournament]` section of a config file (seed 001)."""

from __future__ import annotations

from pydantic import Field

from moot.config import AgentConfig, Section

__all__ = ["TournamentOptions"]


class TournamentOptions(Section):
    """A single-elimination bracket of matches (seed 001, "Tournament Structure")."""

    max_rounds: int = Field(
        default=3, ge=1, le=10, description="challenge/defense rounds of a match after round 0"
    )
    convergence_threshold: float = Field(
        default=80.0, ge=0, le=100, description="a match ends once convergence reaches this"
    )
    structural_threshold: float = Field(
        default=95.0, ge=0, le=100, description="text similarity that decides on its own"
    )
    semantic_threshold: float = Field(
        default=90.0, ge=0, le=100, description="embedding similarity that decides on its own"
    )
    semantic: bool = Field(
        default=True, description="use the local embedding model (the 'embed' extra) if installed"
    )
    shuffle: bool = Field(
        default=True, description="seed the bracket by the session's shuffle; false: as given"
    )
    arbiter: AgentConfig | None = Field(
        default=None,
        description="the arbiter's model; unset: the next agent not in the match (with two "
        "agents, a separate arbiter on the first agent's model)",
    )
    backups: list[AgentConfig] = Field(
        default=[],
        max_length=10,
        description="models that replace a side failing in round 0, in turn",
    )
    accept_arbiter_choice: bool = Field(
        default=False,
        description="when the final match did not converge, say that the arbiter's choice is "
        "the final answer; it never makes a consensus (exit 0 needs more than half of the "
        "contestants' final positions to agree)",
    )
    max_quote_chars: int = Field(
        default=6000, ge=200, le=50_000, description="per quoted position or review"
    )
