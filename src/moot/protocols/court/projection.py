"""The court's worst case for `moot run --dry-run`: every agent round and every judge round
runs, and every answer is re-asked once (none in deterministic mode)."""

from __future__ import annotations

from moot.config import RunConfig
from moot.protocols.court.options import CourtOptions
from moot.protocols.definition import Projected, Projection
from moot.types import alias_for, alias_label

__all__ = ["project"]


def project(config: RunConfig, options: CourtOptions) -> Projection:
    tries = 1 if options.deterministic_mode else 2
    prompt = options.max_context_tokens
    agents = [
        Projected(
            member=options.participant(agent, judge=False),
            role=alias_label(alias_for(i, "agent")),
            # a proposal, then a vote that agrees (one round allows the proposal alone)
            fewest=min(2, options.max_agent_rounds),
            most=options.max_agent_rounds * tries,
            prompt_tokens=prompt,
            cut_to_window=True,  # an agent's history is cut to its model's window (run.py)
        )
        for i, agent in enumerate(config.agents)
    ]
    judges = [
        Projected(
            member=options.participant(judge, judge=True),
            role=alias_label(alias_for(i, "judge")),
            fewest=0,
            most=options.max_judge_rounds * tries,
            prompt_tokens=prompt,
        )
        for i, judge in enumerate(options.judge_configs(config.agents))
    ]
    return agents + judges
