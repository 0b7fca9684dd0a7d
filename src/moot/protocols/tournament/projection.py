"""The tournament's worst case for `moot run --dry-run`: N-1 matches, each running round 0
and `max_rounds` more rounds (two sides, one convergence check each), then the verdict; every
structured answer re-asked once. Backups, which only replace a failing side, are left out.

The totals are exact bounds; how they split between models assumes the configured order and
the first agent winning every match (the seeding is drawn when the run starts)."""

from __future__ import annotations

from moot.config import AgentConfig, RunConfig
from moot.protocols.definition import Projected, Projection
from moot.protocols.tournament.options import TournamentOptions
from moot.types import alias_for, alias_label

__all__ = ["project"]

_TRIES = 2  # every ask goes through the structured-output ladder: one re-ask


def project(config: RunConfig, options: TournamentOptions) -> Projection:
    agents = list(config.agents)
    n, rounds = len(agents), options.max_rounds + 1  # round 0 and the rest
    side = rounds * _TRIES
    arbiter_calls = (rounds + 1) * _TRIES  # a convergence check per round, the verdict
    most = [0] * n
    most_arbiter = 0
    for match in range(1, n):
        most[0] += side
        most[match] += side
        if options.arbiter is not None or n == 2:
            most_arbiter += arbiter_calls
        else:
            most[(match + 1) % n if (match + 1) % n != 0 else 1] += arbiter_calls
    prompt = options.max_quote_chars
    result = [
        Projected(
            member=agent,
            role=alias_label(alias_for(i, "agent")),
            fewest=1 if n > 1 else 0,
            most=most[i],
            prompt_tokens=prompt,
        )
        for i, agent in enumerate(agents)
    ]
    if most_arbiter:
        arbiter: AgentConfig = options.arbiter or agents[0]
        result.append(Projected(arbiter, "Arbiter A", 0, most_arbiter, prompt))
    return result
