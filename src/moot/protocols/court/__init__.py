"""The court (seed 002): agents vote on position ids until a supermajority agrees; else a
judge panel scores the positions and selects one; else the court is deadlocked."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from moot.config import RunConfig
from moot.protocols import definition
from moot.protocols.court.options import COURT_DEFAULTS, CourtOptions
from moot.protocols.court.paths import path_problems
from moot.protocols.court.projection import project
from moot.protocols.court.recorded import stands_for
from moot.protocols.court.rounds import describe_round
from moot.protocols.court.run import run
from moot.protocols.synthesis import latest_replies
from moot.text import summarize
from moot.text.safe import terminal_safe
from moot.types import Event

__all__ = ["PROTOCOL", "CourtOptions"]


def _participants(config: RunConfig, options: CourtOptions) -> list[definition.Role]:
    """The agents, then the judge panel; each as the court calls it (seed temperatures)."""
    agents = [options.participant(a, judge=False) for a in config.agents]
    judges = [options.participant(j, judge=True) for j in options.judge_configs(config.agents)]
    return [
        definition.Role("agent", "aliases", agents),
        definition.Role("judge", "judges", judges, judges=True),
    ]


def _adjust(config: RunConfig, options: CourtOptions) -> RunConfig:
    if options.deterministic_mode:  # no retries
        config.engine = replace(config.engine, attempts=1)
    return config


def _check(data: Mapping[str, Any], cwd: Path) -> list[str]:
    return path_problems(data, cwd)


def _rounds_needed(options: CourtOptions) -> definition.RoundsNeeded:
    """Round 1 only proposes: the first vote on a candidate is round 2's (seed 3.2)."""
    why = "round 1 only proposes positions; the agents vote on a candidate from round 2 on"
    return definition.RoundsNeeded(rounds=2, goal="reach a consensus", why=why)


def _sessions_root(options: CourtOptions) -> Path | None:
    if not options.checkpoint_dir:
        return None
    return Path(options.checkpoint_dir).expanduser() / "sessions"  # plays MOOT_HOME


def _feedback(details: Mapping[str, Any], events: list[Event]) -> list[str]:
    """What a chairman's synthesis weighs: the judges' last scores and reasons, and the
    agents' last votes with their reasoning (the losing side's included)."""
    judged = [f"Judge's score by {x}" for x in latest_replies(events, "score")]
    return judged + [f"Vote by {x}" for x in latest_replies(events, "vote")]


def _reading(step: str, text: str, details: Mapping[str, Any]) -> str:
    """A reply's summary in the report: its JSON fields, decoded, with a control character
    of a position or a reasoning shown as an escape (`\\x12`), never as the byte itself."""
    return terminal_safe(summarize(text))


PROTOCOL = definition.ProtocolDefinition(
    name="court",
    summary="agents vote on position ids; a judge panel settles what they cannot",
    options=CourtOptions,
    conduct=definition.Conduct(run, describe_round, project),
    participants=definition.Participants(_participants, min_agents=2, max_agents=10),
    flags={definition.Flag.ROUNDS: "max_agent_rounds"},
    defaults=COURT_DEFAULTS,
    adjust=_adjust,
    default_task=lambda options: options.topic,
    sessions_root=_sessions_root,
    check=_check,
    script="moot.protocols.court.scripting:SCRIPT",
    stands_for=stands_for,
    feedback=_feedback,
    rounds_needed=_rounds_needed,
    presentation=definition.Presentation(
        phase_titles={"propose": "Proposals", "vote": "Votes", "score": "Judges' scores"},
        turn_reading=_reading,
    ),
)
