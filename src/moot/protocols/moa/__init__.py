"""Mixture-of-Agents (Wang et al. 2024, issue 25): layers of answers, each layer shown the layer
before's answers, then an aggregator writes the final answer from the last layer's. moot's
finding over the answers labels it: consensus only where the last layer's answers agree, else
the aggregator's text is an aggregation of disagreeing answers."""

from __future__ import annotations

from moot.config import RunConfig
from moot.protocols import definition
from moot.protocols.moa.options import MoaOptions
from moot.protocols.moa.outcome import describe_round
from moot.protocols.moa.run import LABELS, run
from moot.protocols.moa.view import project, report_sections, status_lines

__all__ = ["PROTOCOL", "MoaOptions"]


def _participants(config: RunConfig, options: MoaOptions) -> list[definition.Role]:
    """The agents, then the aggregator when the [moa] section names one."""
    roles = [definition.Role("agent", "aliases", config.agents)]
    if options.aggregator is not None:
        roles.append(definition.Role("aggregator", "aggregators", [options.aggregator]))
    return roles


PROTOCOL = definition.ProtocolDefinition(
    name="moa",
    summary="layers of answers, each shown the last, and an aggregator writes the final answer",
    options=MoaOptions,
    conduct=definition.Conduct(run, describe_round, project),
    participants=definition.Participants(
        _participants,
        min_agents=2,  # a later layer is shown the others' answers
        max_agents=len(LABELS),  # every answer of a layer is shown under a label of its own
    ),
    flags={definition.Flag.LAYERS: "layers"},
    presentation=definition.Presentation(
        phase_titles={"propose": "Answers", "aggregate": "Aggregator"},
        status_lines=status_lines,
        report_sections=report_sections,
    ),
    script="moot.protocols.moa.scripting:SCRIPT",
)
