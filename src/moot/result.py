"""`result.json`: the versioned outcome of a session, built from the journal alone.

Everything here derives from journaled data (no clock, no environment), so `moot replay` can
rebuild it byte for byte."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from moot.types import Outcome

__all__ = ["FORMAT_VERSION", "AgentUsage", "Result", "Status", "build_result", "exit_code_for"]

FORMAT_VERSION = 1
Status = Literal["consensus", "no_consensus", "failed", "paused", "interrupted"]

_EXIT_CODES: dict[str, int] = {
    "consensus": 0,
    "no_consensus": 2,
    "failed": 1,
    "paused": 3,
    "interrupted": 130,
}


def exit_code_for(status: str) -> int:
    return _EXIT_CODES.get(status, 1)


class AgentUsage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    prompt_tokens: int
    completion_tokens: int
    tokens_estimated: bool
    cost: float | None  # None: unknown
    calls: int
    failures: int


class Result(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format_version: int = FORMAT_VERSION
    session_id: str
    protocol: str
    task: str
    status: Status
    consensus: bool
    how: str
    final_answer: str
    rounds: int
    disagreements: list[str]
    positions: dict[str, str]
    details: dict[str, Any]
    aliases: dict[str, str]
    agents: dict[str, AgentUsage]
    tokens: int
    cost: float | None
    stop_message: str | None = None

    def to_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"


def build_result(
    *,
    session_id: str,
    protocol: str,
    task: str,
    aliases: Mapping[str, str],
    agents: Mapping[str, AgentUsage],
    outcome: Outcome | None,
    status: Status,
    stop_message: str | None = None,
) -> Result:
    known = [a.cost for a in agents.values()]
    cost = None if any(c is None for c in known) else round(sum(c or 0.0 for c in known), 6)
    tokens = sum(a.prompt_tokens + a.completion_tokens for a in agents.values())
    return Result(
        session_id=session_id,
        protocol=protocol,
        task=task,
        status=status,
        consensus=bool(outcome and outcome.consensus),
        how=outcome.how if outcome else (stop_message or status),
        final_answer=outcome.final_answer if outcome else "",
        rounds=outcome.rounds if outcome else 0,
        disagreements=list(outcome.disagreements) if outcome else [],
        positions=dict(outcome.positions) if outcome else {},
        details=dict(outcome.details) if outcome else {},
        aliases=dict(aliases),
        agents=dict(agents),
        tokens=tokens,
        cost=cost,
        stop_message=stop_message,
    )
