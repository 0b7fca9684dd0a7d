"""The council (issue 25): every agent answers; each ranks the others' answers, shown under
labels drawn per prompt, with its reasons; the answers are ordered by mean rank; a chairman
writes the final answer. moot's finding over the answers labels it: consensus only where the
agents' answers agree, else the chairman's text is a synthesis of disagreeing answers."""

from __future__ import annotations

from moot.config import RunConfig
from moot.protocols import definition
from moot.protocols.council.options import CouncilOptions
from moot.protocols.council.outcome import describe_round
from moot.protocols.council.ranking import LABELS
from moot.protocols.council.run import run
from moot.protocols.council.view import project, report_sections, status_lines

__all__ = ["PROTOCOL", "CouncilOptions"]


def _participants(config: RunConfig, options: CouncilOptions) -> list[definition.Role]:
    """The agents, then the chairman when the [council] or [synthesis] section names one. All of
    them judge: the agents rank each other's answers, the chairman weighs them."""
    roles = [definition.Role("agent", "aliases", config.agents, judges=True)]
    chairman = options.chairman or (config.synthesis.chairman if config.synthesis else None)
    if chairman is not None:
        roles.append(definition.Role("chairman", "chairmen", [chairman], judges=True))
    return roles


PROTOCOL = definition.ProtocolDefinition(
    name="council",
    summary="answer, rank each other's answers, and a chairman writes the final answer",
    options=CouncilOptions,
    conduct=definition.Conduct(run, describe_round, project),
    participants=definition.Participants(
        _participants,
        min_agents=3,  # each agent ranks the others' answers: two at least
        max_agents=len(LABELS),  # the chairman shows every answer under a label of its own
    ),
    presentation=definition.Presentation(
        phase_titles={
            "answer": "Stage 1: Answers",
            "rank": "Stage 2: Rankings",
            "chair": "Chairman",
        },
        status_lines=status_lines,
        report_sections=report_sections,
    ),
    synthesizes=True,  # stage 3 is the chairman's synthesis
    script="moot.protocols.council.scripting:SCRIPT",
)
