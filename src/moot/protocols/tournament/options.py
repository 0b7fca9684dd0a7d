"""The tournament's options: the `[tournament]` section of a config file (seed 001)."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, field

from moot.config import AgentConfig, Section

__all__ = ["TournamentOptions"]


class TournamentOptions(Section):
    """A single-elimination bracket of matches (seed 001, "Tournament Structure")."""

    max_rounds: Annotated[
        int, Meta(ge=1, le=10, description="challenge/defense rounds of a match after round 0")
    ] = 3
    convergence_threshold: Annotated[
        float, Meta(ge=0, le=100, description="a match ends once convergence reaches this")
    ] = 80.0
    structural_threshold: Annotated[
        float, Meta(ge=0, le=100, description="text similarity that decides on its own")
    ] = 95.0
    semantic_threshold: Annotated[
        float, Meta(ge=0, le=100, description="embedding similarity that decides on its own")
    ] = 90.0
    semantic: Annotated[
        bool, Meta(description="use the local embedding model (the 'embed' extra) if installed")
    ] = True
    shuffle: Annotated[
        bool, Meta(description="seed the bracket by the session's shuffle; false: as given")
    ] = True
    arbiter: (
        Annotated[
            AgentConfig,
            Meta(
                description="the arbiter's model; unset: the next agent not in the match (with two "
                "agents, a separate arbiter on the first agent's model)"
            ),
        ]
        | None
    ) = None
    backups: Annotated[
        list[AgentConfig],
        Meta(max_length=10, description="models that replace a side failing in round 0, in turn"),
    ] = field(default_factory=list)
    accept_arbiter_choice: Annotated[
        bool,
        Meta(
            description="when the final match did not converge, say that the arbiter's choice "
            "is the final answer; it never makes a consensus (exit 0 needs more than half of "
            "the contestants' final positions to agree)"
        ),
    ] = False
    max_quote_chars: Annotated[
        int, Meta(ge=200, le=50_000, description="per quoted position or review")
    ] = 6000
