"""`state.json`: a snapshot derived from the session's events, for `moot status` and UIs.

It is rewritten atomically (never half-written) but without fsync: the journal is the truth and
the snapshot can always be rebuilt from it."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from moot.engine.store import SessionFolder, atomic_write
from moot.types import Event

__all__ = ["WRITE_INTERVAL", "StateWriter", "parse_step", "pid_alive"]

WRITE_INTERVAL = 0.25  # seconds between snapshot writes while a run is busy


def parse_step(step: str | None) -> tuple[int | None, str | None]:
    """('r2/revise/agent_a') -> (2, 'revise')."""
    if not step:
        return None, None
    parts = step.split("/")
    round_no = int(parts[0][1:]) if parts[0][:1] == "r" and parts[0][1:].isdigit() else None
    phase = parts[1] if len(parts) > 1 else None
    return round_no, phase


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class StateWriter:
    def __init__(self, folder: SessionFolder, meta: dict[str, Any]) -> None:
        self.folder = folder
        self._written = 0.0
        aliases: dict[str, str] = meta["aliases"]
        self.state: dict[str, Any] = {
            "session_id": folder.id,
            "status": "running",
            "pid": os.getpid(),
            "protocol": meta["protocol"],
            "task": meta["task"],
            "round": 0,
            "phase": None,
            "message": None,
            "agents": {
                alias: {
                    "model": spec,
                    "status": "waiting",
                    "step": None,
                    "tokens": 0,
                    "cost": 0.0,
                    "calls": 0,
                }
                for alias, spec in aliases.items()
            },
            "tokens": 0,
            "cost": 0.0,
            "events": 0,
            "updated": time.time(),
        }

    def absorb(self, events: list[Event]) -> None:
        """Catch up with events journaled before this run, writing once."""
        for event in events:
            self._apply(event)
        for agent in self.state["agents"].values():
            agent["status"] = "waiting"
        self.write()

    def __call__(self, event: Event) -> None:
        # Writing costs about half a millisecond; at most a few writes a second are plenty for
        # a snapshot, and the journal (not this file) is what must be current.
        self._apply(event)
        if event.kind != "ask_started" and time.monotonic() - self._written >= WRITE_INTERVAL:
            self.write()

    def _apply(self, event: Event) -> None:
        state = self.state
        agent = state["agents"].get(event.data.get("agent", ""))
        round_no, phase = parse_step(event.step)
        if round_no is not None:
            state["round"] = max(state["round"], round_no)
            state["phase"] = phase
        if event.kind == "ask_started" and agent is not None:
            agent.update(status="thinking", step=event.step, since=event.ts)
        elif event.kind == "attempt" and agent is not None:
            agent.update(status="retrying", step=event.step)
        elif event.kind == "ask" and agent is not None:
            completion = event.data["completion"]
            usage = completion.get("usage", {})
            tokens = int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
            cost = completion.get("cost") or 0.0
            agent["status"] = "done" if completion.get("status") == "ok" else "failed"
            agent["tokens"] += tokens
            agent["cost"] += cost
            agent["calls"] += 1
            agent["busy"] = agent.get("busy", 0.0) + float(completion.get("latency") or 0.0)
            state["tokens"] += tokens
            state["cost"] += cost
        elif event.kind == "round_result":  # the latest score or tally, for `moot status`
            state["round_result"] = dict(event.data)
        if event.seq is not None:
            state["events"] = event.seq + 1

    def set_status(self, status: str, message: str | None = None) -> None:
        self.state["status"] = status
        self.state["message"] = message
        self.write()

    def write(self) -> None:
        self._written = time.monotonic()
        self.state["updated"] = time.time()
        atomic_write(self.folder.state_json, json.dumps(self.state, indent=2), durable=False)
