"""The arena (seed 000): solve, then rounds of evaluate, revise and verify until a judge finds
consensus or the rounds run out."""

from __future__ import annotations

from moot.config import RunConfig
from moot.protocols.arena.options import ArenaOptions
from moot.protocols.arena.projection import project
from moot.protocols.arena.run import describe_round, run
from moot.protocols.arena.scripting import SCRIPT
from moot.protocols.definition import Flag, ProtocolDefinition, Role

__all__ = ["PROTOCOL", "ArenaOptions"]


def _participants(config: RunConfig, options: ArenaOptions) -> list[Role]:
    """The agents, who also judge: each round's verifier is one of them (rotating)."""
    return [Role("agent", "aliases", config.agents, judges=True)]


PROTOCOL = ProtocolDefinition(
    name="arena",
    summary="solve, critique, revise and verify until a judge finds consensus",
    options=ArenaOptions,
    run=run,
    describe_round=describe_round,
    flags={Flag.ROUNDS: "max_rounds", Flag.VERIFY: "verify_commands"},
    project=project,
    code_tasks=True,
    participants=_participants,
    min_agents=2,  # one agent has nobody to deliberate with
    script=SCRIPT,
    phase_titles={
        "solve": "Solutions",
        "evaluate": "Critiques",
        "revise": "Revisions",
        "verify": "Verdict",
        "check": "Verify commands",
    },
)
