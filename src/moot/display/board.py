"""What the live view shows, kept up to date from the session's events: one row per agent,
the session's round and phase, totals, and the latest round result. Pure state, no terminal:
the live view renders it, `moot status` fills one from state.json.

Times come from the events' own timestamps and an injected clock, so a test can freeze them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from moot.report.view import RoundResult, place
from moot.types import Event

__all__ = ["AgentRow", "Board"]

ENDED = ("finished", "stopped", "failed")


@dataclass
class AgentRow:
    alias: str
    model: str = ""
    status: str = "waiting"  # waiting, thinking, retrying, done, failed
    step: str | None = None
    stage: str = "round"  # or "judges" (a court's judge rounds, steps j<N>/...)
    round: int | None = None
    phase: str | None = None
    calls: int = 0
    failures: int = 0
    tokens: int = 0
    cost: float = 0.0
    cost_known: bool = True
    busy: float = 0.0  # seconds spent in finished calls
    since: float | None = None  # when the call in flight started

    def elapsed(self, now: float) -> float:
        return self.busy + (max(0.0, now - self.since) if self.since is not None else 0.0)


@dataclass
class Board:
    session_id: str = ""
    protocol: str = ""
    task: str = ""
    max_rounds: int | None = None
    consensus_score: int | None = None
    agents: dict[str, AgentRow] = field(default_factory=dict)
    stage: str = "round"
    round: int | None = None
    phase: str | None = None
    rounds_done: int = 0
    latest: RoundResult | None = None
    started: float | None = None
    ended: str | None = None  # the status the session ended with, once it has
    message: str | None = None
    retries: int = 0

    # -- totals -----------------------------------------------------------------------------
    @property
    def tokens(self) -> int:
        return sum(a.tokens for a in self.agents.values())

    @property
    def cost(self) -> float | None:
        if not all(a.cost_known for a in self.agents.values()):
            return None
        return sum(a.cost for a in self.agents.values())

    @property
    def calls(self) -> int:
        return sum(a.calls for a in self.agents.values())

    def row(self, alias: str) -> AgentRow:
        if alias not in self.agents:
            self.agents[alias] = AgentRow(alias)
        return self.agents[alias]

    # -- events -----------------------------------------------------------------------------
    def open(self, meta: Mapping[str, Any], past: Iterable[Event] = ()) -> None:
        """Start from a session's begin meta and the events journaled before this run."""
        self.session_id = str(meta.get("session_id", self.session_id))
        self.protocol = str(meta.get("protocol", self.protocol))
        self.task = str(meta.get("task", self.task))
        options = (meta.get("config") or {}).get(self.protocol) or {}
        for name in ("max_rounds", "max_agent_rounds"):
            if isinstance(options.get(name), int):
                self.max_rounds = options[name]
                break
        if isinstance(options.get("consensus_score"), int):
            self.consensus_score = options["consensus_score"]
        for alias, spec in (meta.get("aliases") or {}).items():
            self.row(str(alias)).model = str(spec)
        for event in past:
            if event.kind in ("ask", "attempt"):
                self.apply(event)
        for row in self.agents.values():
            row.status, row.since = "waiting", None

    def apply(self, event: Event) -> None:
        data = event.data
        ts = event.ts
        if event.kind == "opened":
            self.open(data.get("meta") or {}, data.get("past") or ())
            self.started = ts
            return
        if self.started is None:
            self.started = ts
        stage, round_no, phase = place(event.step)
        if round_no is not None:
            self.stage, self.round, self.phase = stage, round_no, phase
        alias = data.get("agent")
        row = self.row(str(alias)) if alias else None
        if row is not None and round_no is not None:
            row.step, row.stage, row.round, row.phase = event.step, stage, round_no, phase
        if event.kind == "ask_started" and row is not None:
            row.status, row.since = "thinking", ts
        elif event.kind == "attempt" and row is not None:
            row.status = "retrying"
            self.retries += 1
        elif event.kind == "ask" and row is not None:
            completion = data.get("completion") or {}
            usage = completion.get("usage") or {}
            ok = completion.get("status", "ok") == "ok"
            row.status = "done" if ok else "failed"
            row.calls += 1
            row.failures += 0 if ok else 1
            row.tokens += int(usage.get("prompt_tokens", 0)) + int(
                usage.get("completion_tokens", 0)
            )
            if completion.get("cost") is None:
                row.cost_known = False
            else:
                row.cost += float(completion["cost"])
            if row.since is not None and ts is not None:
                row.busy += max(0.0, ts - row.since)
            else:  # journaled before this run: its own measure
                row.busy += float(completion.get("latency") or 0.0)
            row.since = None
        elif event.kind == "round_result":
            result = RoundResult.from_record(data)
            if result is not None:
                self.latest = result
                if result.stage == "round":
                    self.rounds_done = max(self.rounds_done, result.round)
        elif event.kind in ENDED:
            if event.kind == "stopped":
                self.ended = "paused" if data.get("reason") == "limit" else "interrupted"
            else:
                self.ended = str(data.get("status", event.kind))
            self.message = data.get("message")
            for agent in self.agents.values():
                if agent.status in ("thinking", "retrying"):
                    agent.status = "stopped"
                agent.since = None

    def elapsed(self, now: float) -> float:
        return max(0.0, now - self.started) if self.started is not None else 0.0

    # -- state.json -------------------------------------------------------------------------
    @classmethod
    def from_state(cls, state: Mapping[str, Any], meta: Mapping[str, Any] | None = None) -> Board:
        """A board from another process's state.json snapshot (`moot status`)."""
        board = cls(
            session_id=str(state.get("session_id", "")),
            protocol=str(state.get("protocol", "")),
            task=str(state.get("task", "")),
        )
        if meta:
            board.open(meta)
        board.round = state.get("round")
        board.phase = state.get("phase")
        if board.round == 0 and board.phase is None:
            board.round = None  # nothing asked yet
        for alias, agent in (state.get("agents") or {}).items():
            row = board.row(str(alias))
            row.model = str(agent.get("model", row.model))
            row.status = str(agent.get("status", "waiting"))
            row.step = agent.get("step")
            row.stage, row.round, row.phase = place(row.step)
            row.calls = int(agent.get("calls", 0))
            row.tokens = int(agent.get("tokens", 0))
            row.cost = float(agent.get("cost", 0.0))
            row.busy = float(agent.get("busy", 0.0))
            since = agent.get("since")
            row.since = float(since) if since is not None and row.status == "thinking" else None
        latest = state.get("round_result")
        if isinstance(latest, Mapping):
            board.latest = RoundResult.from_record(latest)
            if board.latest is not None and board.latest.stage == "round":
                board.rounds_done = board.latest.round
        status = str(state.get("status", "running"))
        board.ended = None if status == "running" else status
        board.message = state.get("message")
        return board
