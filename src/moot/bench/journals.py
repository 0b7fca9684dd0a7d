"""What the bench reads from a session: its final answer, and each agent's answer per round.

Replies are untrusted model text. An answer is taken from a `<solution>` block when there is one
(arena's format), else from a JSON object's `answer`-like field (court and tournament reply in
JSON), else from the whole reply; then `extract_answer` finds the final answer in it.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

from moot.deliberation.answers import extract_answer
from moot.types import Step

__all__ = ["agent_trajectories", "answer_of"]

_SOLUTION = re.compile(r"<solution>(.*?)(?:</solution>|$)", re.DOTALL | re.IGNORECASE)
_JSON_KEYS = ("answer", "final_answer", "newPositionText", "recommendation", "position")
_MAX_JSON = 200_000  # a reply larger than this is not parsed as JSON


def _text(reply: str) -> str:
    found = _SOLUTION.findall(reply[-_MAX_JSON:])
    if found and found[-1].strip():
        return str(found[-1])
    stripped = reply.strip()
    if stripped.startswith("{") and len(stripped) < _MAX_JSON:
        try:
            data = json.loads(stripped)
        except ValueError:
            return reply
        if isinstance(data, dict):
            for key in _JSON_KEYS:
                value = data.get(key)
                if isinstance(value, str | int | float) and not isinstance(value, bool):
                    return str(value)
    return reply


def answer_of(reply: str) -> str | None:
    """The final answer a reply (or a session's final answer) gives; None when it gives none."""
    found = extract_answer(_text(reply))
    return None if found is None else found.text


def agent_trajectories(folder: Path) -> dict[str, list[str | None]]:
    """Each agent's answer per round (round 0 first), from the session's journal.

    An agent's answer in a round is its reply in the last phase of that round that every agent
    answering in that round was asked (arena: `revise`, not the one-agent `verify`); judges'
    stages (`j1/...`) are not rounds. A failed or missing reply is None."""
    events = folder / "events.jsonl"
    if not events.exists():
        return {}
    # round -> phase -> agent -> reply (None: failed); phases in the order first seen
    rounds: dict[int, dict[str, dict[str, str | None]]] = defaultdict(dict)
    with events.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a torn last line
            if event.get("kind") != "ask":
                continue
            step = Step.parse(event.get("step"))
            data = event.get("data") or {}
            agent = data.get("agent")
            if step.round is None or not isinstance(agent, str):
                continue
            completion = data.get("completion") or {}
            ok = completion.get("status") != "error" and isinstance(completion.get("text"), str)
            phase = rounds[step.round].setdefault(step.phase or "", {})
            phase[agent] = completion["text"] if ok else None
    agents = sorted({a for phases in rounds.values() for p in phases.values() for a in p})
    trajectories: dict[str, list[str | None]] = {a: [] for a in agents}
    for number in sorted(rounds):
        phases = rounds[number]
        asked = {a for p in phases.values() for a in p}
        full = [p for p in phases.values() if set(p) == asked]
        chosen = full[-1] if full else {}
        for agent in agents:
            reply = chosen.get(agent)
            trajectories[agent].append(None if reply is None else answer_of(reply))
    return trajectories
