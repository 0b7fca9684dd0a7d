"""The one tally of a session's progress and usage, fed by its events.

The Session keeps one (its limits are checked against it), `state.json` is its snapshot, the
live view and `moot status` render it, and the reports count with it. Nothing else adds up
calls, tokens or costs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from moot.types import ENDED_KINDS, Completion, Event, EventKind, RoundSummary, Step, Usage

__all__ = ["AgentTally", "Tally"]


@dataclass
class AgentTally:
    alias: str
    model: str = ""
    status: str = "waiting"  # waiting, thinking, retrying, done, failed, stopped
    step: str | None = None
    stage: str = "round"
    round: int | None = None
    phase: str | None = None
    calls: int = 0
    failures: int = 0
    retries: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0  # of the calls whose cost is known
    cost_known: bool = True
    unpriced_tokens: int = 0  # tokens of calls whose cost is unknown (cost limits count them)
    busy: float = 0.0  # seconds spent in finished calls
    since: float | None = None  # when the call in flight started

    @property
    def tokens(self) -> int:
        return self.usage.total

    def elapsed(self, now: float) -> float:
        return self.busy + (max(0.0, now - self.since) if self.since is not None else 0.0)

    def add(self, completion: Completion, ts: float | None = None) -> None:
        """Count a finished call."""
        self.usage = self.usage + completion.usage
        self.calls += 1
        self.retries += max(0, completion.attempts - 1)
        if not completion.ok:
            self.failures += 1
        if completion.cost is None:
            self.cost_known = False
            self.unpriced_tokens += completion.usage.total
        else:
            self.cost += completion.cost
        if self.since is not None and ts is not None:
            self.busy += max(0.0, ts - self.since)
        else:  # journaled before this run: its own measure
            self.busy += completion.latency
        self.since = None
        self.status = "done" if completion.ok else "failed"


@dataclass
class Tally:
    agents: dict[str, AgentTally] = field(default_factory=dict)
    stage: str = "round"
    round: int | None = None
    phase: str | None = None
    rounds_done: int = 0
    latest: RoundSummary | None = None
    started: float | None = None
    ended: str | None = None  # the status the session ended with, once it has
    message: str | None = None
    retries: int = 0
    events: int = 0  # journal lines seen

    @classmethod
    def for_aliases(cls, aliases: Mapping[str, str]) -> Tally:
        return cls(agents={a: AgentTally(a, str(spec)) for a, spec in aliases.items()})

    # -- totals -----------------------------------------------------------------------------
    @property
    def tokens(self) -> int:
        return sum(a.tokens for a in self.agents.values())

    @property
    def cost(self) -> float | None:
        """USD, or None when any call's cost is unknown."""
        if not all(a.cost_known for a in self.agents.values()):
            return None
        return sum(a.cost for a in self.agents.values())

    @property
    def calls(self) -> int:
        return sum(a.calls for a in self.agents.values())

    def row(self, alias: str) -> AgentTally:
        if alias not in self.agents:
            self.agents[alias] = AgentTally(alias)
        return self.agents[alias]

    def elapsed(self, now: float) -> float:
        return max(0.0, now - self.started) if self.started is not None else 0.0

    # -- events -----------------------------------------------------------------------------
    def absorb(self, past: Iterable[Event]) -> None:
        """Catch up with events journaled by earlier runs; nobody is busy afterwards."""
        for event in past:
            self.apply(event)
        self.ended = None
        self.message = None
        for row in self.agents.values():
            if row.status in ("thinking", "retrying", "stopped"):
                row.status = "waiting"
            row.since = None

    def apply(self, event: Event) -> None:
        data = event.data
        ts = event.ts
        if self.started is None and ts is not None and event.kind != EventKind.BEGIN:
            self.started = ts
        if event.seq is not None:
            self.events = event.seq + 1
        step = Step.parse(event.step)
        if step.number is not None:
            self.stage, self.round, self.phase = step.stage, step.number, step.phase
        alias = data.get("agent")
        row = self.row(str(alias)) if isinstance(alias, str) and alias else None
        if row is not None and step.number is not None:
            row.step, row.stage, row.round, row.phase = (
                event.step,
                step.stage,
                step.number,
                (step.phase),
            )
        kind = event.kind
        if kind == EventKind.ASK_STARTED and row is not None:
            row.status, row.since = "thinking", ts
        elif kind == EventKind.ATTEMPT and row is not None:
            row.status = "retrying"
            self.retries += 1
        elif kind == EventKind.ASK and row is not None:
            row.add(Completion.model_validate(data["completion"]), ts)
        elif kind == EventKind.ROUND_RESULT:
            summary = RoundSummary.model_validate(data)
            self.latest = summary
            if summary.stage == "round":
                self.rounds_done = max(self.rounds_done, summary.round)
        elif kind in ENDED_KINDS:
            if kind == EventKind.STOPPED:
                self.ended = "paused" if data.get("reason") == "limit" else "interrupted"
            else:
                self.ended = str(data.get("status", kind.value))
            self.message = data.get("message")
            for agent in self.agents.values():
                if agent.status in ("thinking", "retrying"):
                    agent.status = "stopped"
                agent.since = None
        elif kind == EventKind.RUN_STARTED:
            self.ended = None

    # -- state.json -------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The tally as `state.json` holds it."""
        return {
            "round": self.round,
            "stage": self.stage,
            "phase": self.phase,
            "rounds_done": self.rounds_done,
            "round_result": None if self.latest is None else self.latest.model_dump(mode="json"),
            "agents": {
                a.alias: {
                    "model": a.model,
                    "status": a.status,
                    "step": a.step,
                    "calls": a.calls,
                    "failures": a.failures,
                    "tokens": a.tokens,
                    "cost": a.cost,
                    "cost_known": a.cost_known,
                    "busy": a.busy,
                    "since": a.since,
                }
                for a in self.agents.values()
            },
            "tokens": self.tokens,
            "cost": self.cost,
            "retries": self.retries,
            "events": self.events,
        }

    @classmethod
    def from_snapshot(cls, state: Mapping[str, Any]) -> Tally:
        """A tally from another process's `state.json` (`moot status`)."""
        tally = cls()
        tally.round = state.get("round")
        tally.stage = str(state.get("stage") or "round")
        tally.phase = state.get("phase")
        tally.rounds_done = int(state.get("rounds_done") or 0)
        tally.retries = int(state.get("retries") or 0)
        tally.events = int(state.get("events") or 0)
        latest = state.get("round_result")
        if isinstance(latest, Mapping):
            try:
                tally.latest = RoundSummary.model_validate(latest)
            except ValueError:  # written by an older moot
                tally.latest = None
        for alias, agent in (state.get("agents") or {}).items():
            row = tally.row(str(alias))
            row.model = str(agent.get("model", ""))
            row.status = str(agent.get("status", "waiting"))
            row.step = agent.get("step")
            step = Step.parse(row.step)
            row.stage, row.round, row.phase = step.stage, step.number, step.phase
            row.calls = int(agent.get("calls", 0))
            row.failures = int(agent.get("failures", 0))
            row.usage = Usage(prompt_tokens=int(agent.get("tokens", 0)))
            row.cost = float(agent.get("cost") or 0.0)
            row.cost_known = bool(agent.get("cost_known", True))
            row.busy = float(agent.get("busy", 0.0))
            since = agent.get("since")
            row.since = float(since) if since is not None and row.status == "thinking" else None
        return tally
