"""The arena (seed 000): solve, then rounds of evaluate, revise and verify until a judge finds
consensus or the rounds run out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from moot import lazy
from moot.config import RunConfig
from moot.protocols import definition
from moot.protocols.arena.options import ArenaOptions
from moot.protocols.arena.projection import project
from moot.protocols.arena.run import describe_round, run
from moot.types import Event

if TYPE_CHECKING:
    from moot.protocols import synthesis
else:
    (synthesis,) = lazy.modules("moot.protocols", "synthesis")  # once the outcome is in

__all__ = ["PROTOCOL", "ArenaOptions"]


def _feedback(details: Mapping[str, Any], events: list[Event]) -> list[str]:
    """What a chairman's synthesis weighs (protocols/synthesis.py): the judge's modifications
    to the base solution, and the last round's critiques."""
    verdict = details.get("verdict")
    mods = str(verdict.get("modifications") or "").strip() if isinstance(verdict, Mapping) else ""
    out = []
    if mods and mods.lower().rstrip(".") not in ("none", "n/a", "-"):
        out.append(f"The judge's modifications to the base solution: {mods}")
    return out + [f"Critique by {x}" for x in synthesis.latest_replies(events, "evaluate")]


def _participants(config: RunConfig, options: ArenaOptions) -> list[definition.Role]:
    """The agents, who also judge: each round's verifier is one of them (rotating)."""
    return [definition.Role("agent", "aliases", config.agents, judges=True)]


PROTOCOL = definition.ProtocolDefinition(
    name="arena",
    summary="solve, critique, revise and verify until a judge finds consensus",
    options=ArenaOptions,
    conduct=definition.Conduct(run, describe_round, project),
    # one agent has nobody to deliberate with
    participants=definition.Participants(_participants, min_agents=2),
    flags={definition.Flag.ROUNDS: "max_rounds", definition.Flag.VERIFY: "verify_commands"},
    code_tasks=True,
    script="moot.protocols.arena.scripting:SCRIPT",
    feedback=_feedback,
    presentation=definition.Presentation(
        phase_titles={
            "solve": "Solutions",
            "evaluate": "Critiques",
            "revise": "Revisions",
            "verify": "Verdict",
            "check": "Verify commands",
        }
    ),
)
