"""Pick (seed 003, the Qwen Code Arena): the same code task on every agent in its own worktree,
no deliberation; each agent's status, diff stats, verification and cost are shown, and the
winner is picked by you on the terminal, by a judge model, or later with `moot apply`."""

from __future__ import annotations

from moot.protocols.definition import Conduct, Flag, Participants, ProtocolDefinition
from moot.protocols.pick.options import PickOptions
from moot.protocols.pick.projection import project
from moot.protocols.pick.run import check, participants, run

__all__ = ["PROTOCOL", "PickOptions"]

PROTOCOL = ProtocolDefinition(
    name="pick",
    summary="every agent does the code task in its own worktree; you (or a judge) pick one",
    options=PickOptions,
    conduct=Conduct(run, project=project),
    participants=Participants(participants),
    flags={Flag.PICK: "by"},
    code_tasks=True,
    check=check,
)
