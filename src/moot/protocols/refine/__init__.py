"""The refine protocol (seed 004, "Tournaments"): one text improved pass by pass. A critic finds
its problems, author B revises it, a synthesizer merges A and B, judges rank A, B and AB by
Borda count with ties to the incumbent, until the incumbent wins k passes in a row."""

from __future__ import annotations

from moot.config import RunConfig
from moot.protocols.record import ProtocolRecord, Role
from moot.protocols.refine.options import RefineOptions
from moot.protocols.refine.run import run
from moot.protocols.refine.summary import describe_round, project

__all__ = ["PROTOCOL", "RefineOptions"]


def _participants(config: RunConfig, options: RefineOptions) -> list[Role]:
    """The agents, then a participant per role set in `[refine.roles]`."""
    roles = [Role("agent", "aliases", config.agents)]
    given = options.roles
    for prefix, member in (
        ("critic", given.critic),
        ("reviser", given.author_b),
        ("synthesizer", given.synthesizer),
        ("judge", given.judge),
    ):
        if member is not None:
            roles.append(Role(prefix, f"{prefix}s", [member]))
    return roles


PROTOCOL = ProtocolRecord(
    name="refine",
    summary="improve one text: critic, revision, synthesis, Borda judges, until it holds",
    options=RefineOptions,
    run=run,
    describe_round=describe_round,
    participants=_participants,
    rounds_option="max_passes",
    input_option="input",
    project=project,
    min_agents=1,
)
