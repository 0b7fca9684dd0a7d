"""The tournament (seed 001): models meet two at a time in a single-elimination bracket,
state, challenge and defend positions until they converge (three layers: structural, semantic,
arbiter), and the winner carries its refined position into the next match. On a code task
(`--repo`) the positions are changes in git worktrees with their verification results
(tournament/code.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from moot.config import RunConfig
from moot.protocols.definition import (
    Conduct,
    Flag,
    Participants,
    Presentation,
    ProtocolDefinition,
    Role,
)
from moot.protocols.synthesis import latest_replies
from moot.protocols.tournament.bracket import describe_round
from moot.protocols.tournament.options import TournamentOptions
from moot.protocols.tournament.projection import project
from moot.protocols.tournament.run import run
from moot.protocols.tournament.view import report_sections, turn_reading
from moot.types import Event

__all__ = ["PROTOCOL", "TournamentOptions"]


def _participants(config: RunConfig, options: TournamentOptions) -> list[Role]:
    """The contestants; the arbiter when one is configured (with two contestants and none
    configured, a separate arbiter on the first agent's model, since no agent sits out a
    match); the backups. With no arbiter configured and more than two contestants, an agent
    that sits out a match arbitrates it: the agents judge too."""
    agents_judge = options.arbiter is None and len(config.agents) > 2
    roles = [Role("agent", "aliases", config.agents, judges=agents_judge)]
    if options.arbiter is not None:
        roles.append(Role("arbiter", "arbiters", [options.arbiter], judges=True))
    elif len(config.agents) == 2:
        roles.append(Role("arbiter", "arbiters", [config.agents[0]], judges=True))
    if options.backups:
        roles.append(Role("backup", "backups", options.backups))
    return roles


def _feedback(details: Mapping[str, Any], events: list[Event]) -> list[str]:
    """What a chairman's synthesis weighs: the last match's challenges, the losing side's
    among them."""
    return [f"Challenge by {x}" for x in latest_replies(events, "challenge")]


PROTOCOL = ProtocolDefinition(
    name="tournament",
    summary="a bracket of two-model matches; challenge, defend, converge; the winner advances",
    options=TournamentOptions,
    conduct=Conduct(run, describe_round, project),
    participants=Participants(_participants, min_agents=2, max_agents=16),
    flags={Flag.SHUFFLE: "shuffle"},
    code_tasks=True,
    script="moot.protocols.tournament.scripting:SCRIPT",
    feedback=_feedback,
    presentation=Presentation(report_sections=report_sections, turn_reading=turn_reading),
)
