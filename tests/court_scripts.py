"""Scripted courts: agents and judges whose behaviour a test sets, keyed on step ids.

A behaviour is a function of one `Ask` (who, which round, the candidate or the positions shown)
returning the reply text. Behaviours are bound to script names, not aliases: aliases are random
per session, names are what a test talks about."""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from moot.config import RunConfig
from moot.deliberation.consensus import position_id
from moot.lifecycle.plan import resolve
from moot.models.scripted import ScriptedFailure, register_script
from moot.types import FailureKind, Request


@dataclass(frozen=True)
class Ask:
    name: str  # the script name: "one", "j1", ...
    alias: str
    step: str
    round: int  # the agent round, or the judge round
    reask: bool
    candidate: str | None  # agents: the position voted on; None in a proposal round
    positions: tuple[str, ...]  # judges: the position ids shown
    request: Request


Behaviour = Callable[[Ask], str]


def reply(
    vote: str = "abstain",
    *,
    target: str | None = None,
    text: str | None = None,
    reasoning: str = "Because it holds up.",
    confidence: float = 0.8,
) -> str:
    data: dict[str, Any] = {"vote": vote, "reasoning": reasoning, "confidence": confidence}
    if target is not None:
        data["targetPositionId"] = target
    if text is not None:
        data["newPositionText"] = text
    return json.dumps(data)


def verdict(selected: str, positions: tuple[str, ...], confidence: float = 0.9) -> str:
    scores = {pid: (90 if pid == selected else 40) for pid in positions}
    return json.dumps(
        {
            "selectedPositionId": selected,
            "scoresByPositionId": scores,
            "reasoning": "It is the most complete.",
            "confidence": confidence,
        }
    )


def stubborn(text: str, confidence: float = 0.8, reasoning: str = "Mine is right.") -> Behaviour:
    """Proposes `text`, then votes yes only for it and no (restating it) otherwise."""

    def behave(ask: Ask) -> str:
        if ask.candidate is None:
            return reply(text=text, confidence=confidence, reasoning=reasoning)
        if ask.candidate == position_id(text):
            return reply("yes", target=ask.candidate, confidence=confidence, reasoning=reasoning)
        return reply("no", text=text, confidence=confidence, reasoning=reasoning)

    return behave


def agreeable(text: str, confidence: float = 0.8) -> Behaviour:
    """Proposes `text`, then votes yes for any candidate."""

    def behave(ask: Ask) -> str:
        if ask.candidate is None:
            return reply(text=text, confidence=confidence)
        return reply("yes", target=ask.candidate, confidence=confidence)

    return behave


def selects(text: str, confidence: float = 0.9) -> Behaviour:
    """A judge that always selects the position with this text."""
    return lambda ask: verdict(position_id(text), ask.positions, confidence)


def failing(ask: Ask) -> str:
    """A participant whose every call fails for good (a refused key)."""
    raise ScriptedFailure(FailureKind.AUTH, "this participant always fails")


def down(ask: Ask) -> str:
    """A participant whose provider is down (a 503 on every call): a transient failure."""
    raise ScriptedFailure(FailureKind.SERVER, "upstream connect error")


_CANDIDATE = re.compile(r'has the id "([0-9a-f]{12})"')
_POSITION = re.compile(r'<quoted from="position ([0-9a-f]{12})"')


class Court:
    """One scripted court: behaviours by name for agents and judges; records every call."""

    def __init__(
        self, agents: dict[str, Behaviour], judges: dict[str, Behaviour] | None = None
    ) -> None:
        self.agents = agents
        self.judges = judges or {}
        self.requests: list[Request] = []
        self.steps: Counter[str] = Counter()
        self.names: dict[str, str] = {}  # alias -> script name
        self._lock = threading.Lock()

    def script(self, name: str, behave: Behaviour) -> Callable[[Request], str]:
        def answer(request: Request) -> str:
            step = request.meta["step"]
            with self._lock:
                self.requests.append(request)
                self.steps[step] += 1
                self.names[request.meta["agent"]] = name
            head = step.split("/")[0]
            found = _CANDIDATE.search(_first_prompt(request)) if "/vote/" in step else None
            ask = Ask(
                name=name,
                alias=request.meta["agent"],
                step=step,
                round=int(head[1:]),
                reask=step.endswith("/reask"),
                candidate=found.group(1) if found else None,
                positions=tuple(sorted(set(_POSITION.findall(_first_prompt(request))))),
                request=request,
            )
            return behave(ask)

        return answer

    def specs(self, group: dict[str, Behaviour]) -> list[str]:
        specs = []
        for name, behave in group.items():
            register_script(name, self.script(name, behave))
            specs.append(f"scripted:@{name}")
        return specs

    def config(
        self,
        seed: int = 7,
        engine: dict[str, Any] | None = None,
        limits: dict[str, Any] | None = None,
        **court: Any,
    ) -> RunConfig:
        """A court config with these agents and judges; keywords are `court` options."""
        data: dict[str, Any] = {
            "protocol": "court",
            "agents": [{"model": s} for s in self.specs(self.agents)],
            "seed": seed,
            "court": court,
            "engine": engine or {},
            "limits": limits or {},
        }
        if self.judges:
            court.setdefault("judges", [{"model": s} for s in self.specs(self.judges)])
        else:
            court.setdefault("judge_panel_enabled", False)
        return resolve(RunConfig.read(data)).config

    def asked(self, prefix: str) -> list[str]:
        return sorted(s for s in self.steps if s.startswith(prefix))

    def prompts_of(self, name: str, step_prefix: str) -> list[str]:
        return [
            r.prompt
            for r in self.requests
            if self.names.get(r.meta["agent"]) == name and r.meta["step"].startswith(step_prefix)
        ]


def _first_prompt(request: Request) -> str:
    """A re-ask carries the original prompt earlier in the conversation."""
    users = [m.content for m in request.messages if m.role == "user"]
    return users[0] if users else ""
