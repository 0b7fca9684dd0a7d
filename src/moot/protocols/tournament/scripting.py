"""The tournament's replies for a scripted persona (`moot bench --suite adversarial`,
protocols/scripting.py): a side's position, challenge and defence as the JSON each phase asks
for, and the judge persona's convergence scores and verdict as the arbiter."""

from __future__ import annotations

import json
from typing import Any

from moot.protocols.scripting import Actor, JudgeKind, Script
from moot.types import Request, Step

__all__ = ["SCRIPT"]


def _convergence(judge: JudgeKind, agree: bool) -> str:
    if judge == "always_100" or (judge == "fair" and agree):
        score, left = 100, []
    elif judge in ("always_consensus", "self_contradicting"):
        score = 95
        left = (
            ["the final numbers differ", "the reasoning differs"]
            if judge != "always_consensus"
            else []
        )
    else:
        score, left = 30, ["the answers differ"]
    return json.dumps(
        {
            "overall_convergence": score,
            "core_recommendation": 20 if judge == "self_contradicting" else score,
            "reasoning_alignment": score,
            "tradeoff_alignment": score,
            "implementation_alignment": score,
            "key_disagreements": left,
        }
    )


def _side(kind: str, text: str, critique: str, confidence: float) -> str:
    if kind == "positions":
        return json.dumps(
            {
                "recommendation": text,
                "reasons": ["worked out"],
                "confidence": confidence,
                "confidence_factors": ["checked"],
                "uncertainty_points": ["none"],
            }
        )
    if kind == "challenge":
        return json.dumps(
            {
                "weaknesses": [critique, "It does not show its working."],
                "counter_claims": [critique],
                "alternatives": [],
                "strong_points": ["clear"],
                "position": text,
                "confidence": confidence,
            }
        )
    return json.dumps(
        {
            "defense": [critique],
            "concessions": [],
            "position": text,
            "position_changed": False,
            "what_changed": "",
            "confidence": confidence,
        }
    )


def reply(actor: Actor, request: Request) -> str:
    phase = Step.parse(request.meta["step"]).phase or ""
    kind = phase.rsplit("_", 1)[-1]
    if kind == "convergence":
        return _convergence(actor.judge, actor.agree)
    if kind == "verdict":
        return json.dumps(
            {
                "winner": "A",
                "reasons": ["its position is more complete"],
                "fundamental_disagreement": "the answers",
                "why_no_convergence": "each side holds its own",
            }
        )
    text = actor.answer(request.prompt)
    return _side(
        kind,
        text if text is not None else actor.abstention,
        actor.critique(text),
        actor.confidence,
    )


def _options(judge: str) -> dict[str, Any]:
    return {"arbiter": {"model": judge}, "semantic": False, "max_rounds": 2}


SCRIPT = Script(reply=reply, options=_options, revises=True)
