"""The arena's worst case for `moot run --dry-run`: every round runs, every structured answer
is re-asked once (unless `reask_on_bad_format = false`), and conversations grow to the context
budget, which run.py keeps within three quarters of the smallest context window
(`cut_to_window`)."""

from __future__ import annotations

from moot.config import RunConfig
from moot.protocols.arena.options import ArenaOptions
from moot.protocols.definition import Projected, Projection
from moot.types import alias_for, alias_label

__all__ = ["project"]


def project(config: RunConfig, options: ArenaOptions) -> Projection:
    """Per agent: solve, then per round evaluate and revise; one verify per round, by a judge
    drawn from those who have not judged yet, then from everyone: an agent judges at most once
    in the first n rounds and then possibly every round. Each agent's bound is reachable; their
    sum over-counts the verifies (one per round in all). Fewest, in a run where every call
    answers: the first answers already agree (`stop_on_agreement`), so the solve alone; else
    a solve and an evaluation whose reviewers find too few answers left to revise."""
    n, rounds = len(config.agents), options.max_rounds
    tries = 2 if options.reask_on_bad_format else 1
    judged = 1 + max(0, rounds - n)
    fewest = 1 if options.stop_on_agreement else 2
    return [
        Projected(
            member=agent,
            role=alias_label(alias_for(i, "agent")),
            fewest=fewest,
            most=tries + rounds * (1 + tries) + judged * tries,
            prompt_tokens=options.context_budget_tokens,
            cut_to_window=True,
        )
        for i, agent in enumerate(config.agents)
    ]
