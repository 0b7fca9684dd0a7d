"""The one tally of a session's progress and usage, fed by its events.

The Session keeps one (its limits are checked against it), `state.json` is its snapshot, the
live view and `moot status` render it, and the reports count with it. Nothing else adds up
calls, tokens or costs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from msgspec import Struct, field

from moot.types import (
    ENDED_KINDS,
    Completion,
    Event,
    EventKind,
    RoundSummary,
    Step,
    Usage,
    dump,
    load,
)

__all__ = ["AgentStanding", "Standing", "active_seconds"]


def active_seconds(events: Iterable[Event]) -> float:
    """Seconds the session has been running, over all its runs (from journal timestamps)."""
    total = 0.0
    start: float | None = None
    last: float | None = None
    for event in events:
        if event.ts is None:
            continue
        if event.kind == EventKind.RUN_STARTED:
            if start is not None and last is not None:
                total += max(0.0, last - start)
            start = event.ts
        last = event.ts
    if start is not None and last is not None:
        total += max(0.0, last - start)
    return total


class AgentStanding(Struct):
    """One agent's part of the tally: where it is and what it has cost."""

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
    change: str = ""  # a code task: the worktree's diff stats and verify results so far

    def note_code(self, what: object, result: Any) -> None:
        """A code task's `change` or `verify` event, as the live view's Change column."""
        diff, _, checks = self.change.partition("; ")
        if what == "change" and isinstance(result, Mapping):
            diff = (
                f"{result.get('files', 0)} files +{result.get('insertions', 0)}"
                f" -{result.get('deletions', 0)}"
            )
        elif what == "verify" and isinstance(result, list) and result:
            passed = sum(1 for r in result if r.get("exit_code") == 0 and not r.get("timed_out"))
            checks = f"verify {passed}/{len(result)}"
        self.change = "; ".join(part for part in (diff, checks) if part)

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


class Standing(Struct):
    """Where a session stands, folded from its events (what the faces render)."""

    agents: dict[str, AgentStanding] = field(default_factory=dict)
    stage: str = "round"
    round: int | None = None
    phase: str | None = None
    rounds_done: int = 0
    latest: RoundSummary | None = None
    active_before: float = 0.0  # running time of earlier runs (from the journal)
    run_started: float | None = None  # when this run started
    ended_at: float | None = None
    ended: str | None = None  # the status the session ended with, once it has
    message: str | None = None
    retries: int = 0
    events: int = 0  # journal lines seen

    @classmethod
    def for_aliases(cls, aliases: Mapping[str, str]) -> Standing:
        return cls(agents={a: AgentStanding(a, str(spec)) for a, spec in aliases.items()})

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

    def row(self, alias: str) -> AgentStanding:
        if alias not in self.agents:
            self.agents[alias] = AgentStanding(alias)
        return self.agents[alias]

    def elapsed(self, now: float) -> float:
        """Running time over every run, as limits count it; the clock stops at the end."""
        if self.run_started is None:
            return self.active_before
        end = self.ended_at if self.ended_at is not None else now
        return self.active_before + max(0.0, end - self.run_started)

    # -- events -----------------------------------------------------------------------------
    def absorb(
        self, past: Iterable[Event], completions: Mapping[int, Completion] | None = None
    ) -> None:
        """Catch up with events journaled by earlier runs; nobody is busy afterwards.
        `completions`: ask events' completions by the event's `seq`, where the caller has
        validated them already (a Session, on resume: a thousand events need not be read
        twice). A step asked again after a failure has an ask event for each try."""
        past = list(past)
        known = completions or {}
        for event in past:
            self.apply(event, known.get(event.seq) if event.seq is not None else None)
        self.active_before = active_seconds(past)
        self.run_started = self.ended_at = None
        self.ended = None
        self.message = None
        for row in self.agents.values():
            if row.status in ("thinking", "retrying", "stopped"):
                row.status = "waiting"
            row.since = None

    def apply(self, event: Event, completion: Completion | None = None) -> None:
        """Fold `event` in; `completion`: an ask event's completion, already validated."""
        data = event.data
        ts = event.ts
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
            row.status, row.since = "queued", ts  # its time runs from the ask
        elif kind == EventKind.CALL_STARTED and row is not None:
            row.status = "thinking"
        elif kind == EventKind.ATTEMPT and row is not None:
            row.status = "retrying"
            self.retries += 1
        elif kind == EventKind.ASK and row is not None:
            row.add(completion or load(data["completion"], Completion), ts)
        elif kind == EventKind.CODE and row is not None:
            row.note_code(data.get("what"), data.get("result"))
        elif kind == EventKind.ROUND_RESULT:
            summary = load(data, RoundSummary)
            self.latest = summary
            if summary.stage == "round":
                self.rounds_done = max(self.rounds_done, summary.round)
        elif kind in ENDED_KINDS:
            if kind == EventKind.STOPPED:
                self.ended = "interrupted" if data.get("reason") == "interrupted" else "paused"
            else:
                self.ended = str(data.get("status", kind.value))
            self.message = data.get("message")
            self.ended_at = ts
            for agent in self.agents.values():
                if agent.status in ("thinking", "retrying"):
                    agent.status = "stopped"
                if agent.since is not None and ts is not None:  # a call cut short counts too
                    agent.busy += max(0.0, ts - agent.since)
                agent.since = None
        elif kind == EventKind.RUN_STARTED:
            self.ended = self.ended_at = None
            self.run_started = ts

    # -- state.json -------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The tally as `state.json` holds it."""
        return {
            "round": self.round,
            "stage": self.stage,
            "phase": self.phase,
            "rounds_done": self.rounds_done,
            "round_result": None if self.latest is None else dump(self.latest),
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
                    "change": a.change,
                }
                for a in self.agents.values()
            },
            "tokens": self.tokens,
            "cost": self.cost,
            "retries": self.retries,
            "events": self.events,
            "active_before": self.active_before,
            "run_started": self.run_started,
            "ended_at": self.ended_at,
        }

    @classmethod
    def from_snapshot(cls, state: Mapping[str, Any]) -> Standing:
        """A tally from another process's `state.json` (`moot status`)."""
        tally = cls()
        tally.round = state.get("round")
        tally.stage = str(state.get("stage") or "round")
        tally.phase = state.get("phase")
        tally.rounds_done = int(state.get("rounds_done") or 0)
        tally.retries = int(state.get("retries") or 0)
        tally.events = int(state.get("events") or 0)
        tally.active_before = float(state.get("active_before") or 0.0)
        run_started, ended_at = state.get("run_started"), state.get("ended_at")
        tally.run_started = float(run_started) if run_started is not None else None
        tally.ended_at = float(ended_at) if ended_at is not None else None
        latest = state.get("round_result")
        if isinstance(latest, Mapping):
            try:
                tally.latest = load(latest, RoundSummary)
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
            row.change = str(agent.get("change") or "")
            since = agent.get("since")
            row.since = float(since) if since is not None and row.status == "thinking" else None
        return tally
