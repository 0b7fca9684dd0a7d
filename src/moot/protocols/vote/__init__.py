"""The vote protocol: independent answers and a majority, the baseline of `moot bench`."""

from __future__ import annotations

from moot.protocols.definition import Conduct, Flag, ProtocolDefinition
from moot.protocols.vote.options import VoteOptions
from moot.protocols.vote.run import describe_round, project, run

__all__ = ["PROTOCOL", "VoteOptions"]

PROTOCOL = ProtocolDefinition(
    name="vote",
    summary="every agent answers K times independently; the largest group of answers wins",
    options=VoteOptions,
    conduct=Conduct(run, describe_round, project),
    flags={Flag.SAMPLES: "samples"},
    script="moot.protocols.vote.scripting:SCRIPT",
)
