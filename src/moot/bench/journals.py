"""What the bench reads from a session: its final answer, each agent's answer per round, and
the calls it made.

Replies are untrusted model text. Each agent's answer per round is, where the session's
`result.json` carries moot's claims (`claims`: one per agent per round), that claim; else it is
read from the journal: as the position the reply stands for where the session's protocol says
(its record's `stands_for`: a vote stands for the position it supports, never a number from
its reasoning or confidence), else a `<solution>` block when there is one, else a JSON
object's answer-like field, else the whole reply.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from moot import protocols
from moot.deliberation.answers import extract_answer
from moot.deliberation.consensus import position_id
from moot.deliberation.parsing import json_object
from moot.errors import ConfigError
from moot.types import Step

__all__ = ["agent_trajectories", "answer_of", "calls_made", "position_of"]

_SOLUTION = re.compile(r"<solution>(.*?)(?:</solution>|$)", re.DOTALL | re.IGNORECASE)
_JSON_KEYS = ("answer", "final_answer", "newPositionText", "recommendation", "position")
_MAX_JSON = 200_000  # a reply larger than this is not parsed as JSON
Reader = Callable[[str, str, Mapping[str, str]], str | None]


_json = json_object


def _text(reply: str) -> str:
    found = _SOLUTION.findall(reply[-_MAX_JSON:])
    if found and found[-1].strip():
        return str(found[-1])
    data = _json(reply)
    if data is not None:
        for key in _JSON_KEYS:
            value = data.get(key)
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                return str(value)
    return reply


def answer_of(reply: str) -> str | None:
    """The final answer a reply (or a session's final answer) gives; None when it gives none."""
    found = extract_answer(_text(reply))
    return None if found is None else found.text


def _reader(protocol: str | None) -> Reader | None:
    """How `protocol` reads a recorded reply (its record's `stands_for`); None: unknown, or it
    does not say."""
    if not protocol:
        return None
    try:
        return protocols.get(protocol).stands_for
    except ConfigError:  # a protocol no longer registered
        return None


def position_of(
    reply: str,
    prompt: str = "",
    positions: Mapping[str, str] | None = None,
    *,
    protocol: str | None = None,
) -> str:
    """The answer text a reply recorded by `protocol` stands for: as the protocol reads it
    (its record's `stands_for`; e.g. a vote for the position it supports, its text from
    `positions`, id -> text, or quoted in the `prompt`; "" when it holds none); any other
    reply, its `<solution>` or answer field (`_text`)."""
    reader = _reader(protocol)
    found = reader(reply, prompt, positions or {}) if reader is not None else None
    return _text(reply) if found is None else found


def _result_claims(folder: Path) -> dict[str, list[str | None]] | None:
    """Each agent's claim per round from result.json's `claims`, when it carries them, as the
    answer it gives (`answer_of`: "The answer is 14." is 14), for the question's scorer."""
    try:
        data = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    rows = data.get("claims") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not rows:
        return None
    found: dict[str, dict[int, str | None]] = defaultdict(dict)
    for row in rows:
        if not isinstance(row, dict):
            continue
        agent, rnd, claim = row.get("agent"), row.get("round"), row.get("claim")
        if not isinstance(agent, str) or not isinstance(rnd, int) or isinstance(rnd, bool):
            continue
        valid = row.get("valid", True) is not False and isinstance(claim, str) and claim.strip()
        found[agent][rnd] = (answer_of(str(claim)) or str(claim)) if valid else None
    if not found:
        return None
    last = max(r for rounds in found.values() for r in rounds)
    first = min(r for rounds in found.values() for r in rounds)
    return {a: [found[a].get(r) for r in range(first, last + 1)] for a in sorted(found)}


def _events(folder: Path) -> list[dict[str, Any]]:
    events = folder / "events.jsonl"
    if not events.exists():
        return []
    out = []
    with events.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a torn last line
            if isinstance(event, dict):
                out.append(event)
    return out


def calls_made(folder: Path) -> int | None:
    """The model calls a session made: its journal's ask events, less the answers its response
    cache gave (a call retried is one call; its failed tries are `attempt` events). None when
    the session has no journal."""
    if not (folder / "events.jsonl").exists():
        return None
    return sum(
        1
        for event in _events(folder)
        if event.get("kind") == "ask" and not (event.get("data") or {}).get("cache")
    )


def agent_trajectories(folder: Path) -> dict[str, list[str | None]]:
    """Each agent's answer per round (round 0 first, or the protocol's first round), from the
    session's claims in result.json where present, else from its journal.

    From the journal, an agent's answer in a round is its reply in the last phase of that round
    that every agent answering in that round was asked (arena: `revise`, not the one-agent
    `verify`), read by `position_of`; judges' stages (`j1/...`) are not rounds. A failed or
    missing reply, or one that holds no answer, is None."""
    claims = _result_claims(folder)
    if claims is not None:
        return claims
    # round -> phase -> agent -> answer text (None: failed or none); phases in the order seen
    rounds: dict[int, dict[str, dict[str, str | None]]] = defaultdict(dict)
    positions: dict[str, str] = {}  # position id -> text, of the answers read so far
    protocol: str | None = None
    for event in _events(folder):
        if event.get("kind") == "begin":
            named = (event.get("data") or {}).get("protocol")
            protocol = named if isinstance(named, str) else None
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
        if not ok:
            phase[agent] = None
            continue
        prompt = data.get("prompt")
        said = prompt if isinstance(prompt, str) else ""
        text = position_of(completion["text"], said, positions, protocol=protocol)
        if text.strip():
            positions.setdefault(position_id(text), text)
        phase[agent] = text if text.strip() else None
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
