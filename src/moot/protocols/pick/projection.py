"""Pick's worst case for `moot run --dry-run`: every agent's turn on the code task, asked once
more when its answer holds no diff that applies (models that answer with a diff; a CLI agent
edits its worktree and is asked once), and with `by = "judge"` one call of the judge. A human
choice calls no model."""

from __future__ import annotations

from moot.config import AgentConfig, RunConfig
from moot.protocols.definition import Projected, Projection, completion_cap
from moot.protocols.pick.options import PickOptions
from moot.types import alias_for, alias_label, parse_spec

__all__ = ["project"]

_REASK = 2  # the first answer, and one more quoting git's error (protocols/codework.py)
_NOTE = 200  # tokens of instructions around the task and the context


def project(config: RunConfig, options: PickOptions) -> Projection:
    context = config.code.context_budget_tokens if config.code is not None else 0
    agents = list(config.agents)
    result = [
        Projected(
            member=agent,
            role=alias_label(alias_for(i, "agent")),
            fewest=1,
            most=1 if parse_spec(agent.model).provider == "cli" else _REASK,
            # the re-ask carries the first prompt, the answer and git's error
            prompt_tokens=context + completion_cap(agent) + _NOTE,
        )
        for i, agent in enumerate(agents)
    ]
    if options.by == "judge":
        judge = AgentConfig(model=options.judge) if options.judge else agents[0]
        # every agent's diff and its verification, each quoted up to max_quote_chars
        shown = len(agents) * 2 * options.max_quote_chars // 4
        result.append(Projected(judge, "Judge A", 1, 1, shown + _NOTE))
    return result
