"""The arena (seed 000): solve, then rounds of evaluate, revise and verify until a judge finds
consensus or the rounds run out."""

from __future__ import annotations

from moot.protocols.arena.options import ArenaOptions
from moot.protocols.arena.projection import project
from moot.protocols.arena.run import describe_round, run
from moot.protocols.arena.scripting import SCRIPT
from moot.protocols.definition import (
    Conduct,
    Flag,
    Participants,
    Presentation,
    ProtocolDefinition,
)

__all__ = ["PROTOCOL", "ArenaOptions"]


PROTOCOL = ProtocolDefinition(
    name="arena",
    summary="solve, critique, revise and verify until a judge finds consensus",
    options=ArenaOptions,
    conduct=Conduct(run, describe_round, project),
    participants=Participants(min_agents=2),  # one agent has nobody to deliberate with
    flags={Flag.ROUNDS: "max_rounds", Flag.VERIFY: "verify_commands"},
    code_tasks=True,
    script=SCRIPT,
    presentation=Presentation(
        phase_titles={
            "solve": "Solutions",
            "evaluate": "Critiques",
            "revise": "Revisions",
            "verify": "Verdict",
            "check": "Verify commands",
        }
    ),
)
