"""Scripted tournaments: sides and arbiters whose behaviour a test sets, keyed on the phase of
the step id (`r3/match_1_challenge/agent_b`) and the match and round each prompt names.

Behaviours are bound to script names, not aliases (aliases are random per session). With two
agents and no arbiter configured, the arbiter runs on the first agent's model, so every script
also answers the arbiter's asks (convergence scores, verdicts)."""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from msgspec.structs import replace

from moot.config import RunConfig
from moot.models.scripted import ScriptedFailure, register_script
from moot.types import FailureKind, Request, Step

# (match, round within the match) -> the recommendation a side holds then
Stance = Callable[[int, int], str]


def steady(text: str) -> Stance:
    return lambda match, rnd: text


def moves(before: str, after: str, at: int, match: int | None = None) -> Stance:
    """Holds `before` until round `at` (of `match`, or of every match), then `after`."""
    return lambda m, r: after if r >= at and (match is None or m == match) else before


@dataclass
class Tourney:
    stances: dict[str, Stance]
    overall: Callable[[Request], int] = lambda request: 40  # the arbiter's convergence score
    # the arbiter's key disagreements (default: one below a score of 80, none from 80 on)
    disagreements: Callable[[Request, int], list[str]] = lambda request, score: (
        [] if score >= 80 else ["which store to use"]
    )
    winner: Callable[[Request], str] = lambda request: "A"  # the arbiter's verdict
    fail: set[tuple[str, str]] = field(default_factory=set)  # (name, phase kind)
    fail_kind: FailureKind = FailureKind.SERVER  # why they fail (transient: a provider down)
    requests: list[Request] = field(default_factory=list)
    steps: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def script(self, name: str) -> Callable[[Request], str]:
        def reply(request: Request) -> str:
            step = request.meta["step"]
            with self._lock:
                self.requests.append(request)
                self.steps[step] += 1
            phase = Step.parse(step).phase or ""
            kind = phase.rsplit("_", 1)[-1]
            if (name, kind) in self.fail:
                raise ScriptedFailure(self.fail_kind, f"{name} fails every {kind}")
            if kind == "convergence":
                score = self.overall(request)
                return json.dumps(
                    {
                        "overall_convergence": score,
                        "core_recommendation": score,
                        "reasoning_alignment": score,
                        "tradeoff_alignment": score,
                        "implementation_alignment": score,
                        "key_disagreements": self.disagreements(request, score),
                    }
                )
            if kind == "verdict":
                return json.dumps(
                    {
                        "winner": self.winner(request),
                        "reasons": ["its position is more complete"],
                        "fundamental_disagreement": "relational versus document storage",
                        "why_no_convergence": "each side weighs flexibility differently",
                    }
                )
            found = re.search(r"Match (\d+), round (\d+)", request.prompt)
            assert found, request.prompt
            text = self.stances[name](int(found.group(1)), int(found.group(2)))
            if kind == "positions":
                return json.dumps(
                    {
                        "recommendation": text,
                        "reasons": [f"{name} has measured it"],
                        "confidence": 0.7,
                        "confidence_factors": ["benchmarks"],
                        "uncertainty_points": ["growth of the data"],
                    }
                )
            if kind == "challenge":
                return json.dumps(
                    {
                        "weaknesses": ["ignores backups", "ignores cost"],
                        "counter_claims": ["the load is small"],
                        "alternatives": [],
                        "strong_points": ["clear"],
                        "position": text,
                        "confidence": 0.7,
                    }
                )
            return json.dumps(
                {
                    "defense": ["measured"],
                    "concessions": ["cost matters"],
                    "position": text,
                    "position_changed": False,
                    "what_changed": "",
                    "confidence": 0.75,
                }
            )

        return reply

    def config(self, names: tuple[str, ...], **section: Any) -> RunConfig:
        agents = []
        for name in names:
            register_script(name, self.script(name))
            agents.append({"model": f"scripted:@{name}"})
        backups = section.pop("backups", [])
        for name in backups:
            register_script(name, self.script(name))
        data: dict[str, Any] = {
            "protocol": "tournament",
            "agents": agents,
            "seed": 11,
            "tournament": {**section, "backups": [{"model": f"scripted:@{n}"} for n in backups]},
        }
        return RunConfig.read(data)

    def asked(self, kind: str) -> list[str]:
        return [s for s in self.steps if (Step.parse(s).phase or "").endswith(kind)]

    def prompts(self, kind: str) -> list[str]:
        return [
            r.prompt
            for r in self.requests
            if (Step.parse(r.meta["step"]).phase or "").endswith(kind)
        ]


class ReaskingTourney(Tourney):
    """The scripted tournament, answering a re-ask as it answered the prompt it follows (the
    re-ask itself names no match and round)."""

    def script(self, name: str) -> Callable[[Request], str]:
        reply = super().script(name)

        def answer(request: Request) -> str:
            if Step.parse(request.meta["step"]).reask:
                request = replace(request, messages=request.messages[:-2])
            return reply(request)

        return answer
