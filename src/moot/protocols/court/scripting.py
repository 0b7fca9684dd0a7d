"""The court's replies for a scripted persona (`moot bench --suite adversarial`,
protocols/scripting.py): an agent's proposal, or its vote on the candidate position it is
shown (a "yes" adopts the candidate); a judge's scores and selection as the judge persona
gives them."""

from __future__ import annotations

import json
import re
from typing import Any

from moot.protocols.scripting import Actor, JudgeKind, Script
from moot.types import Request, Step

__all__ = ["SCRIPT"]

_POSITION = re.compile(r'<quoted from="position ([0-9a-f]{12})"')
_CANDIDATE = re.compile(r'has the id "([0-9a-f]{12})"')
_CANDIDATE_TEXT = re.compile(
    r'<quoted from="candidate position [0-9a-f]{12}" id="([0-9A-Za-z_-]+)">\n(.*?)\n'
    r'</quoted id="\1">',
    re.DOTALL,
)


def _judge(judge: JudgeKind, prompt: str) -> str:
    positions = sorted(set(_POSITION.findall(prompt)))
    if not positions:
        return json.dumps({"reasoning": "no positions", "confidence": 0.0})
    first = positions[0]
    if judge == "always_100":
        scores = dict.fromkeys(positions, 100)
    elif judge == "self_contradicting":
        scores = {p: (20 if p == first else 95) for p in positions}
    else:
        scores = {p: (90 if p == first else 40) for p in positions}
    confidence = 1.0 if judge in ("always_100", "always_consensus") else 0.9
    return json.dumps(
        {
            "selectedPositionId": first,
            "scoresByPositionId": scores,
            "reasoning": "All positions agree." if judge != "strict" else "The first is best.",
            "confidence": confidence,
        }
    )


def _agent(actor: Actor, text: str | None, prompt: str) -> tuple[str, str | None]:
    """(reply, the answer it holds after it)."""
    own = actor.held
    candidate = _CANDIDATE.search(prompt)
    reasoning = actor.critique(own)
    if candidate is None:  # a proposal
        body = {"vote": "abstain", "reasoning": reasoning, "confidence": actor.confidence}
        body["newPositionText"] = text if text is not None else actor.abstention
        return json.dumps(body), text
    shown = _CANDIDATE_TEXT.search(prompt)
    candidate_text = shown.group(2) if shown else ""
    vote = actor.vote(candidate_text, own)
    reply: dict[str, Any] = {"vote": vote, "reasoning": reasoning, "confidence": actor.confidence}
    if vote == "yes":
        reply["targetPositionId"] = candidate.group(1)
        return json.dumps(reply), candidate_text or own
    if vote == "no":
        reply["newPositionText"] = text if text is not None else actor.abstention
    return json.dumps(reply), own


def reply(actor: Actor, request: Request) -> str:
    """The persona reads the round's prompt: the first user message (later ones re-ask)."""
    users = [m.content for m in request.messages if m.role == "user"]
    first = users[0] if users else request.prompt
    if Step.parse(request.meta["step"]).phase == "score":
        return _judge(actor.judge, first)
    text = actor.answer(first)
    answer, actor.held = _agent(actor, text, first)
    return answer


def _options(judge: str) -> dict[str, Any]:
    return {"judges": [{"model": judge}] * 3, "max_agent_rounds": 3}


SCRIPT = Script(reply=reply, options=_options, revises=True, adopts_on_yes=True)
